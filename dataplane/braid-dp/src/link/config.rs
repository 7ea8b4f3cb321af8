//! What one direction of an emulated link does to packets, and how a JSON
//! object changes it (checked whole before anything is applied).

use serde_json::{Map, Value};

use crate::common::field::{FieldError, Problem};
use crate::link::loss::GilbertElliott;
use crate::link::rate::parse_rate;

/// Largest delay or jitter accepted, in milliseconds (one minute).
const MAX_DELAY_MS: f64 = 60_000.0;
/// Largest queue accepted, in packets.
const MAX_QUEUE_LIMIT: u64 = 10_000_000;
pub const DEFAULT_QUEUE_LIMIT: usize = 100_000;

/// The settings of one direction (a → b or b → a).
#[derive(Debug, Clone, PartialEq)]
pub struct DirectionConfig {
    pub delay_ns: u64,
    pub jitter_ns: u64,
    /// Independent loss probability in [0, 1].
    pub loss: f64,
    pub bursty_loss: Option<GilbertElliott>,
    /// None: no rate limit.
    pub rate_bps: Option<u64>,
    /// Most packets held at once (waiting for the rate or in the delay line).
    pub queue_limit: usize,
    /// A cut link drops everything, including what it already holds.
    pub cut: bool,
}

impl Default for DirectionConfig {
    fn default() -> Self {
        DirectionConfig {
            delay_ns: 0,
            jitter_ns: 0,
            loss: 0.0,
            bursty_loss: None,
            rate_bps: None,
            queue_limit: DEFAULT_QUEUE_LIMIT,
            cut: false,
        }
    }
}

/// The names of the fields a config object may carry.
pub const CONFIG_FIELDS: [&str; 7] = [
    "delay_ms",
    "jitter_ms",
    "loss_percent",
    "gilbert",
    "rate",
    "queue_limit",
    "cut",
];

/// A validated change: each field is `Some` when the request sets it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigPatch {
    pub delay_ns: Option<u64>,
    pub jitter_ns: Option<u64>,
    pub loss: Option<f64>,
    pub bursty_loss: Option<Option<GilbertElliott>>,
    pub rate_bps: Option<Option<u64>>,
    pub queue_limit: Option<usize>,
    pub cut: Option<bool>,
}

impl ConfigPatch {
    /// Reads the config fields of `object`, ignoring keys not in [`CONFIG_FIELDS`]
    /// (the caller checks for unknown keys). Errors name the field.
    pub fn from_json(object: &Map<String, Value>) -> Result<ConfigPatch, FieldError> {
        let mut patch = ConfigPatch::default();
        if let Some(value) = object.get("delay_ms") {
            patch.delay_ns = Some(millis_field("delay_ms", value)?);
        }
        if let Some(value) = object.get("jitter_ms") {
            patch.jitter_ns = Some(millis_field("jitter_ms", value)?);
        }
        if let Some(value) = object.get("loss_percent") {
            patch.loss = Some(percent_field("loss_percent", value)?);
        }
        if let Some(value) = object.get("gilbert") {
            patch.bursty_loss = Some(gilbert_field(value)?);
        }
        if let Some(value) = object.get("rate") {
            patch.rate_bps = Some(rate_field(value)?);
        }
        if let Some(value) = object.get("queue_limit") {
            patch.queue_limit = Some(queue_limit_field(value)?);
        }
        if let Some(value) = object.get("cut") {
            let cut = value.as_bool().ok_or_else(|| {
                FieldError::new(
                    "cut",
                    Problem::Expected {
                        what: "true or false",
                        got: None,
                    },
                )
            })?;
            patch.cut = Some(cut);
        }
        Ok(patch)
    }

    pub fn apply_to(&self, config: &mut DirectionConfig) {
        if let Some(delay) = self.delay_ns {
            config.delay_ns = delay;
        }
        if let Some(jitter) = self.jitter_ns {
            config.jitter_ns = jitter;
        }
        if let Some(loss) = self.loss {
            config.loss = loss;
        }
        if let Some(bursty) = self.bursty_loss {
            config.bursty_loss = bursty;
        }
        if let Some(rate) = self.rate_bps {
            config.rate_bps = rate;
        }
        if let Some(limit) = self.queue_limit {
            config.queue_limit = limit;
        }
        if let Some(cut) = self.cut {
            config.cut = cut;
        }
    }
}

fn number_field(name: &str, value: &Value) -> Result<f64, FieldError> {
    value
        .as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| FieldError::expected(name, "a number", value))
}

fn outside(name: &str, value: f64, range: String) -> FieldError {
    FieldError::new(name, Problem::Outside { value, range })
}

fn millis_field(name: &str, value: &Value) -> Result<u64, FieldError> {
    let ms = number_field(name, value)?;
    if !(0.0..=MAX_DELAY_MS).contains(&ms) {
        return Err(outside(name, ms, format!("0 to {MAX_DELAY_MS} ms")));
    }
    Ok((ms * 1e6).round() as u64)
}

fn percent_field(name: &str, value: &Value) -> Result<f64, FieldError> {
    let percent = number_field(name, value)?;
    if !(0.0..=100.0).contains(&percent) {
        return Err(outside(name, percent, "0 to 100".into()));
    }
    Ok(percent / 100.0)
}

const GILBERT_FIELDS: [&str; 4] = [
    "p_percent",
    "r_percent",
    "bad_loss_percent",
    "good_loss_percent",
];

fn gilbert_field(value: &Value) -> Result<Option<GilbertElliott>, FieldError> {
    let object = match value {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        other => return Err(FieldError::expected("gilbert", "an object or null", other)),
    };
    crate::common::field::check_fields(object, &GILBERT_FIELDS, "gilbert.")?;
    let get = |key: &str, default: Option<f64>| -> Result<f64, FieldError> {
        match (object.get(key), default) {
            (Some(value), _) => percent_field(&format!("gilbert.{key}"), value),
            (None, Some(default)) => Ok(default),
            (None, None) => Err(FieldError::missing(format!("gilbert.{key}"))),
        }
    };
    Ok(Some(GilbertElliott {
        p: get("p_percent", None)?,
        r: get("r_percent", None)?,
        bad_loss: get("bad_loss_percent", Some(1.0))?,
        good_loss: get("good_loss_percent", Some(0.0))?,
    }))
}

fn rate_field(value: &Value) -> Result<Option<u64>, FieldError> {
    let bits = match value {
        Value::Null => return Ok(None),
        Value::String(text) => {
            parse_rate(text).map_err(|e| FieldError::new("rate", Problem::Rate(e)))?
        }
        Value::Number(_) => {
            let bits = number_field("rate", value)?;
            if !(0.0..=1e15).contains(&bits) {
                return Err(outside("rate", bits, "0 to 1e15 bit/s".into()));
            }
            bits.round() as u64
        }
        other => {
            return Err(FieldError::expected(
                "rate",
                "bit/s, a string like \"100M\" or null",
                other,
            ))
        }
    };
    // Zero means "no limit", as in the command line.
    Ok(if bits == 0 { None } else { Some(bits) })
}

fn queue_limit_field(value: &Value) -> Result<usize, FieldError> {
    match value.as_u64() {
        Some(limit) if (1..=MAX_QUEUE_LIMIT).contains(&limit) => Ok(limit as usize),
        _ => Err(FieldError::new(
            "queue_limit",
            Problem::WholeNumber {
                unit: Some("packets"),
                low: 1,
                high: MAX_QUEUE_LIMIT,
                got: value.clone(),
            },
        )),
    }
}

/// The config as the control socket reports it (same field names as it takes).
pub fn config_to_json(config: &DirectionConfig) -> Value {
    let gilbert = match config.bursty_loss {
        None => Value::Null,
        Some(channel) => serde_json::json!({
            "p_percent": channel.p * 100.0,
            "r_percent": channel.r * 100.0,
            "bad_loss_percent": channel.bad_loss * 100.0,
            "good_loss_percent": channel.good_loss * 100.0,
        }),
    };
    serde_json::json!({
        "delay_ms": config.delay_ns as f64 / 1e6,
        "jitter_ms": config.jitter_ns as f64 / 1e6,
        "loss_percent": config.loss * 100.0,
        "gilbert": gilbert,
        "rate": config.rate_bps,
        "queue_limit": config.queue_limit,
        "cut": config.cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(value: Value) -> Result<ConfigPatch, FieldError> {
        ConfigPatch::from_json(value.as_object().unwrap())
    }

    #[test]
    fn reads_every_field() {
        let p = patch(json!({
            "delay_ms": 150, "jitter_ms": 0.5, "loss_percent": 1,
            "gilbert": {"p_percent": 1, "r_percent": 25},
            "rate": "100M", "queue_limit": 500, "cut": true
        }))
        .unwrap();
        let mut config = DirectionConfig::default();
        p.apply_to(&mut config);
        assert_eq!(config.delay_ns, 150_000_000);
        assert_eq!(config.jitter_ns, 500_000);
        assert!((config.loss - 0.01).abs() < 1e-12);
        let channel = config.bursty_loss.unwrap();
        assert!((channel.p - 0.01).abs() < 1e-12 && (channel.r - 0.25).abs() < 1e-12);
        assert_eq!((channel.bad_loss, channel.good_loss), (1.0, 0.0));
        assert_eq!(config.rate_bps, Some(100_000_000));
        assert_eq!(config.queue_limit, 500);
        assert!(config.cut);
    }

    #[test]
    fn a_patch_changes_only_what_it_names() {
        let mut config = DirectionConfig {
            delay_ns: 5_000_000,
            rate_bps: Some(10),
            ..DirectionConfig::default()
        };
        patch(json!({"delay_ms": 150}))
            .unwrap()
            .apply_to(&mut config);
        assert_eq!(config.delay_ns, 150_000_000);
        assert_eq!(config.rate_bps, Some(10));
    }

    #[test]
    fn null_and_zero_switch_features_off() {
        let mut config = DirectionConfig {
            rate_bps: Some(10),
            bursty_loss: Some(GilbertElliott {
                p: 0.1,
                r: 0.1,
                bad_loss: 1.0,
                good_loss: 0.0,
            }),
            ..DirectionConfig::default()
        };
        patch(json!({"rate": null, "gilbert": null}))
            .unwrap()
            .apply_to(&mut config);
        assert_eq!((config.rate_bps, config.bursty_loss), (None, None));
        config.rate_bps = Some(10);
        patch(json!({"rate": 0})).unwrap().apply_to(&mut config);
        assert_eq!(config.rate_bps, None);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (json!({"delay_ms": -1}), "delay_ms"),
            (json!({"delay_ms": "5"}), "delay_ms"),
            (json!({"jitter_ms": 1e9}), "jitter_ms"),
            (json!({"loss_percent": 101}), "loss_percent"),
            (json!({"gilbert": 3}), "gilbert"),
            (json!({"gilbert": {"p_percent": 1}}), "gilbert.r_percent"),
            (
                json!({"gilbert": {"p_percent": 1, "r_percent": 2, "x": 1}}),
                "gilbert.x",
            ),
            (json!({"rate": "fast"}), "rate"),
            (json!({"rate": true}), "rate"),
            (json!({"queue_limit": 0}), "queue_limit"),
            (json!({"queue_limit": 1.5}), "queue_limit"),
            (json!({"cut": "yes"}), "cut"),
        ];
        for (value, field) in cases {
            let error = patch(value.clone()).unwrap_err();
            assert_eq!(error.field, field, "{value}: {error}");
        }
    }

    #[test]
    fn reports_the_fields_it_takes() {
        let report = config_to_json(&DirectionConfig::default());
        let object = report.as_object().unwrap();
        for field in CONFIG_FIELDS {
            assert!(object.contains_key(field), "{field}");
        }
        let back = patch(report).unwrap();
        let mut config = DirectionConfig::default();
        back.apply_to(&mut config);
        assert_eq!(config, DirectionConfig::default());
    }
}
