//! Rates written the way operators write them: `100M`, `2.5G`, `500kbit`, `10Gbps`.

use std::fmt;

/// Why a text is not a rate (the text as given, trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateError {
    NotARate(String),
    OutOfRange(String),
}

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateError::NotARate(text) => {
                write!(f, "{text:?} is not a rate (e.g. 100M, 2.5G, 500k)")
            }
            RateError::OutOfRange(text) => write!(f, "{text:?} is out of range (0 to 1000T)"),
        }
    }
}

impl std::error::Error for RateError {}

/// Parses a rate in bit/s from a number with an optional SI prefix (k, M, G,
/// T, powers of 1000) and an optional `bit`, `bps` or `b/s` suffix.
pub fn parse_rate(text: &str) -> Result<u64, RateError> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let without_unit = ["bit/s", "bits", "bit", "bps", "b/s"]
        .iter()
        .find_map(|unit| lower.strip_suffix(unit))
        .unwrap_or(&lower);
    let (number, factor) = split_prefix(without_unit);
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| RateError::NotARate(trimmed.to_string()))?;
    let bits = value * factor;
    if !bits.is_finite() || !(0.0..=1e15).contains(&bits) {
        return Err(RateError::OutOfRange(trimmed.to_string()));
    }
    Ok(bits.round() as u64)
}

fn split_prefix(text: &str) -> (&str, f64) {
    let prefixes = [('k', 1e3), ('m', 1e6), ('g', 1e9), ('t', 1e12)];
    for (letter, factor) in prefixes {
        if let Some(number) = text.strip_suffix(letter) {
            return (number, factor);
        }
    }
    (text, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_prefixes_and_units() {
        assert_eq!(parse_rate("100M"), Ok(100_000_000));
        assert_eq!(parse_rate("2.5G"), Ok(2_500_000_000));
        assert_eq!(parse_rate("500kbit"), Ok(500_000));
        assert_eq!(parse_rate("10Gbps"), Ok(10_000_000_000));
        assert_eq!(parse_rate("64000"), Ok(64_000));
        assert_eq!(parse_rate(" 1 m "), Ok(1_000_000));
    }

    #[test]
    fn rejects_what_is_not_a_rate() {
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("-5M").is_err());
        assert!(parse_rate("").is_err());
        assert_eq!(
            parse_rate("1e30"),
            Err(RateError::OutOfRange("1e30".into()))
        );
        assert_eq!(
            parse_rate("fast").unwrap_err().to_string(),
            "\"fast\" is not a rate (e.g. 100M, 2.5G, 500k)"
        );
    }
}
