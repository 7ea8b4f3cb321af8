//! The control protocol: one JSON object per line in, one per line out.
//!
//! Requests: `get`, `set`, `cut`, `restore`, `counters`, each with an optional
//! `direction` (`a_to_b`, `b_to_a` or `both`, the default). A request is
//! checked whole before anything changes; a bad one gets
//! `{"ok": false, "error": "<field>: <why>"}` and changes nothing.

use serde_json::{json, Map, Value};

use crate::common::field::{FieldError, Problem};
use crate::control::{parse_command, unknown_command, RequestError};
use crate::link::config::{config_to_json, ConfigPatch, DirectionConfig, CONFIG_FIELDS};
use crate::link::counters::CounterSnapshot;

/// One direction of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    AToB,
    BToA,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::AToB, Side::BToA];

    pub fn name(self) -> &'static str {
        match self {
            Side::AToB => "a_to_b",
            Side::BToA => "b_to_a",
        }
    }
}

/// A parsed, valid request.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Get(Vec<Side>),
    Set(Vec<Side>, ConfigPatch),
    Counters(Vec<Side>),
}

/// What the control socket acts on (the running link, or a fake in tests).
pub trait LinkControl {
    fn config(&self, side: Side) -> DirectionConfig;
    fn set_config(&self, side: Side, config: DirectionConfig);
    fn counters(&self, side: Side) -> CounterSnapshot;
}

const COMMANDS: [&str; 5] = ["get", "set", "cut", "restore", "counters"];

/// Parses one request line.
pub fn parse_request(line: &str) -> Result<Request, RequestError> {
    let (object, command) = parse_command(line, &COMMANDS)?;
    let sides = parse_direction(&object)?;
    let takes_config = command == "set";
    check_known_fields(&object, takes_config)?;
    match command.as_str() {
        "get" => Ok(Request::Get(sides)),
        "counters" => Ok(Request::Counters(sides)),
        "set" => Ok(Request::Set(sides, ConfigPatch::from_json(&object)?)),
        "cut" | "restore" => {
            let patch = ConfigPatch {
                cut: Some(command == "cut"),
                ..ConfigPatch::default()
            };
            Ok(Request::Set(sides, patch))
        }
        other => Err(unknown_command(other, &COMMANDS)),
    }
}

fn parse_direction(object: &Map<String, Value>) -> Result<Vec<Side>, FieldError> {
    match object.get("direction") {
        None => Ok(Side::BOTH.to_vec()),
        Some(Value::String(name)) => match name.as_str() {
            "a_to_b" => Ok(vec![Side::AToB]),
            "b_to_a" => Ok(vec![Side::BToA]),
            "both" => Ok(Side::BOTH.to_vec()),
            other => Err(FieldError::new(
                "direction",
                Problem::NotOneOf {
                    value: other.to_string(),
                    what: "a_to_b, b_to_a or both",
                },
            )),
        },
        Some(other) => Err(FieldError::expected("direction", "a string", other)),
    }
}

fn check_known_fields(object: &Map<String, Value>, takes_config: bool) -> Result<(), FieldError> {
    for key in object.keys() {
        let known = key == "cmd"
            || key == "direction"
            || (takes_config && CONFIG_FIELDS.contains(&key.as_str()));
        if !known {
            let problem = if takes_config {
                let mut known = vec!["cmd", "direction"];
                known.extend(CONFIG_FIELDS);
                Problem::UnknownField { known }
            } else {
                Problem::OnlySetTakesConfig
            };
            return Err(FieldError::new(key.as_str(), problem));
        }
    }
    Ok(())
}

/// Answers one request: the reply object, or why it was refused (then nothing changed).
pub fn answer(line: &str, link: &dyn LinkControl) -> Result<Value, RequestError> {
    parse_request(line).map(|request| execute(request, link))
}

/// Answers one request line (the reply has no trailing newline).
#[cfg(test)]
pub fn handle_line(line: &str, link: &dyn LinkControl) -> String {
    crate::control::reply_line(answer(line, link))
}

fn execute(request: Request, link: &dyn LinkControl) -> Value {
    match request {
        Request::Get(sides) => config_reply(&sides, link),
        Request::Set(sides, patch) => {
            for &side in &sides {
                let mut config = link.config(side);
                patch.apply_to(&mut config);
                link.set_config(side, config);
            }
            config_reply(&sides, link)
        }
        Request::Counters(sides) => {
            let mut counters = Map::new();
            for side in sides {
                counters.insert(side.name().to_string(), link.counters(side).to_json());
            }
            json!({"ok": true, "counters": counters})
        }
    }
}

fn config_reply(sides: &[Side], link: &dyn LinkControl) -> Value {
    let mut config = Map::new();
    for &side in sides {
        config.insert(side.name().to_string(), config_to_json(&link.config(side)));
    }
    json!({"ok": true, "config": config})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[derive(Default)]
    struct FakeLink {
        configs: RefCell<[DirectionConfig; 2]>,
    }

    fn index(side: Side) -> usize {
        match side {
            Side::AToB => 0,
            Side::BToA => 1,
        }
    }

    impl LinkControl for FakeLink {
        fn config(&self, side: Side) -> DirectionConfig {
            self.configs.borrow()[index(side)].clone()
        }
        fn set_config(&self, side: Side, config: DirectionConfig) {
            self.configs.borrow_mut()[index(side)] = config;
        }
        fn counters(&self, side: Side) -> CounterSnapshot {
            CounterSnapshot {
                forwarded: index(side) as u64 + 10,
                ..CounterSnapshot::default()
            }
        }
    }

    fn ask(link: &FakeLink, line: &str) -> Value {
        serde_json::from_str(&handle_line(line, link)).unwrap()
    }

    #[test]
    fn set_raises_the_delay_of_one_direction() {
        let link = FakeLink::default();
        let reply = ask(
            &link,
            r#"{"cmd":"set","direction":"a_to_b","delay_ms":150}"#,
        );
        assert_eq!(reply["ok"], true);
        assert_eq!(reply["config"]["a_to_b"]["delay_ms"], 150.0);
        assert_eq!(link.config(Side::AToB).delay_ns, 150_000_000);
        assert_eq!(link.config(Side::BToA).delay_ns, 0);
    }

    #[test]
    fn cut_and_restore_both_directions() {
        let link = FakeLink::default();
        assert_eq!(ask(&link, r#"{"cmd":"cut"}"#)["ok"], true);
        assert!(link.config(Side::AToB).cut && link.config(Side::BToA).cut);
        let reply = ask(&link, r#"{"cmd":"restore","direction":"both"}"#);
        assert_eq!(reply["config"]["b_to_a"]["cut"], false);
        assert!(!link.config(Side::AToB).cut);
    }

    #[test]
    fn get_and_counters_report_per_direction() {
        let link = FakeLink::default();
        let reply = ask(&link, r#"{"cmd":"get","direction":"b_to_a"}"#);
        assert!(reply["config"].get("a_to_b").is_none());
        assert_eq!(reply["config"]["b_to_a"]["queue_limit"], 100_000);
        let reply = ask(&link, r#"{"cmd":"counters"}"#);
        assert_eq!(reply["counters"]["a_to_b"]["forwarded"], 10);
        assert_eq!(reply["counters"]["b_to_a"]["forwarded"], 11);
    }

    #[test]
    fn bad_requests_get_an_error_naming_the_field_and_change_nothing() {
        let link = FakeLink::default();
        let cases = [
            ("not json", "request"),
            ("[1]", "request"),
            (r#"{"direction":"both"}"#, "cmd"),
            (r#"{"cmd":5}"#, "cmd"),
            (r#"{"cmd":"reboot"}"#, "cmd"),
            (r#"{"cmd":"set","direction":"up"}"#, "direction"),
            (r#"{"cmd":"set","direction":1}"#, "direction"),
            (
                r#"{"cmd":"set","delay_ms":10,"loss_percent":200}"#,
                "loss_percent",
            ),
            (r#"{"cmd":"set","delay_ms":10,"delay":5}"#, "delay"),
            (r#"{"cmd":"get","delay_ms":10}"#, "delay_ms"),
            (r#"{"cmd":"cut","delay_ms":10}"#, "delay_ms"),
        ];
        for (line, field) in cases {
            let reply = ask(&link, line);
            assert_eq!(reply["ok"], false, "{line}");
            let error = reply["error"].as_str().unwrap();
            assert!(error.starts_with(&format!("{field}:")), "{line}: {error}");
            assert_eq!(
                link.config(Side::AToB),
                DirectionConfig::default(),
                "{line}"
            );
            assert_eq!(
                link.config(Side::BToA),
                DirectionConfig::default(),
                "{line}"
            );
        }
    }
}
