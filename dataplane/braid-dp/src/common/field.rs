//! Errors that name the field at fault: every refusal of a config or a
//! control request reads `<field>: <why>` (the Python side matches on the
//! field), and the why is one of [`Problem`]'s cases.

use std::error::Error;
use std::fmt;

use serde_json::Value;

use crate::edge::wrr::WrrError;
use crate::frame::PrefixError;
use crate::link::rate::RateError;

/// What is wrong with a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// `missing`
    Missing,
    /// `missing (one of get, set, ...)`: a command name was left out.
    MissingCommand {
        known: &'static [&'static str],
    },
    /// `unknown field (known: a, b, ...)`
    UnknownField {
        known: Vec<&'static str>,
    },
    /// `unknown field (only set takes config fields)`
    OnlySetTakesConfig,
    /// `unknown command "x" (one of get, set, ...)`
    UnknownCommand {
        name: String,
        known: &'static [&'static str],
    },
    /// `expected <what>` or `expected <what>, got <value>`
    Expected {
        what: &'static str,
        got: Option<Value>,
    },
    /// `expected a whole number [of <unit>] from <low> to <high>, got <value>`
    WholeNumber {
        unit: Option<&'static str>,
        low: u64,
        high: u64,
        got: Value,
    },
    /// `expected milliseconds above 0, at most <high>, got <value>`
    Millis {
        high: f64,
        got: Value,
    },
    /// `<value> is outside <range>`
    Outside {
        value: f64,
        range: String,
    },
    /// `<value> is not <what>` (the value quoted)
    NotOneOf {
        value: String,
        what: &'static str,
    },
    /// `<value> appears twice`
    Twice(String),
    /// `VLAN <id> is already another reservation's`
    VlanTaken(u16),
    /// `must not be below <other field>`
    Below(&'static str),
    /// `no reservation "<id>"`
    NoReservation(String),
    /// `nothing to change (fields: ...)`
    NothingToChange {
        fields: &'static [&'static str],
    },
    Rate(RateError),
    Prefix(PrefixError),
    Wrr(WrrError),
}

/// A field (dotted and indexed as in the JSON: `reservations[0].paths[1].vlan`)
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub field: String,
    pub problem: Problem,
}

impl FieldError {
    pub fn new(field: impl Into<String>, problem: Problem) -> FieldError {
        FieldError {
            field: field.into(),
            problem,
        }
    }

    /// The same error one level down: `prefix` goes before the field's name.
    pub fn within(mut self, prefix: &str) -> FieldError {
        self.field.insert_str(0, prefix);
        self
    }

    /// `expected <what>, got <value>`.
    pub fn expected(field: impl Into<String>, what: &'static str, got: &Value) -> FieldError {
        FieldError::new(
            field,
            Problem::Expected {
                what,
                got: Some(got.clone()),
            },
        )
    }

    pub fn missing(field: impl Into<String>) -> FieldError {
        FieldError::new(field, Problem::Missing)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing => write!(f, "missing"),
            Problem::MissingCommand { known } => write!(f, "missing (one of {})", known.join(", ")),
            Problem::UnknownField { known } => {
                write!(f, "unknown field (known: {})", known.join(", "))
            }
            Problem::OnlySetTakesConfig => {
                write!(f, "unknown field (only set takes config fields)")
            }
            Problem::UnknownCommand { name, known } => {
                write!(f, "unknown command {name:?} (one of {})", known.join(", "))
            }
            Problem::Expected { what, got: None } => write!(f, "expected {what}"),
            Problem::Expected {
                what,
                got: Some(got),
            } => write!(f, "expected {what}, got {got}"),
            Problem::WholeNumber {
                unit,
                low,
                high,
                got,
            } => {
                write!(f, "expected a whole number ")?;
                if let Some(unit) = unit {
                    write!(f, "of {unit} ")?;
                }
                write!(f, "from {low} to {high}, got {got}")
            }
            Problem::Millis { high, got } => {
                write!(
                    f,
                    "expected milliseconds above 0, at most {high}, got {got}"
                )
            }
            Problem::Outside { value, range } => write!(f, "{value} is outside {range}"),
            Problem::NotOneOf { value, what } => write!(f, "{value:?} is not {what}"),
            Problem::Twice(value) => write!(f, "{value} appears twice"),
            Problem::VlanTaken(vlan) => write!(f, "VLAN {vlan} is already another reservation's"),
            Problem::Below(other) => write!(f, "must not be below {other}"),
            Problem::NoReservation(id) => write!(f, "no reservation {id:?}"),
            Problem::NothingToChange { fields } => {
                write!(f, "nothing to change (fields: {})", fields.join(", "))
            }
            Problem::Rate(error) => error.fmt(f),
            Problem::Prefix(error) => error.fmt(f),
            Problem::Wrr(error) => error.fmt(f),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl Error for FieldError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.problem {
            Problem::Rate(error) => Some(error),
            Problem::Prefix(error) => Some(error),
            Problem::Wrr(error) => Some(error),
            _ => None,
        }
    }
}

/// Refuses any key of `object` not in `known`; `at` goes before the key's name.
pub fn check_fields(
    object: &serde_json::Map<String, Value>,
    known: &[&'static str],
    at: &str,
) -> Result<(), FieldError> {
    match object.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(FieldError::new(
            format!("{at}{key}"),
            Problem::UnknownField {
                known: known.to_vec(),
            },
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_field_then_why() {
        let error = FieldError::new(
            "paths[0].vlan",
            Problem::WholeNumber {
                unit: None,
                low: 1,
                high: 4094,
                got: json!(4095),
            },
        )
        .within("reservations[2].");
        assert_eq!(
            error.to_string(),
            "reservations[2].paths[0].vlan: expected a whole number from 1 to 4094, got 4095"
        );
        let error = FieldError::new(
            "queue_limit",
            Problem::WholeNumber {
                unit: Some("packets"),
                low: 1,
                high: 10,
                got: json!(0),
            },
        );
        assert_eq!(
            error.to_string(),
            "queue_limit: expected a whole number of packets from 1 to 10, got 0"
        );
        let error = FieldError::new("weights", Problem::Wrr(WrrError::AllZero));
        assert!(error.source().is_some());
    }
}
