//! The edge's control protocol: one JSON object per line each way, as the link's.
//!
//! Requests: `get`, `configure` (a whole config), `set_weights` (one
//! reservation's weights), `set_reseq` (resequencer knobs), `counters`.
//! A request is checked whole before anything changes; a bad one gets
//! `{"ok": false, "error": "<field>: <why>"}` and changes nothing.

use serde_json::{json, Map, Value};

use crate::common::field::{check_fields, FieldError, Problem};
use crate::control::{parse_command, unknown_command, RequestError};
use crate::edge::config::{reseq_patch, EdgeConfig, RESEQ_FIELDS};
use crate::edge::reseq::ReseqParams;

/// What the control socket acts on (the running edge, or a fake in tests).
pub trait EdgeControl {
    fn config(&self) -> EdgeConfig;
    fn configure(&self, config: EdgeConfig);
    /// Checks and applies; on error nothing changed.
    fn set_weights(&self, reservation: &str, weights: &[f64]) -> Result<(), FieldError>;
    fn set_reseq(&self, params: ReseqParams);
    fn counters(&self) -> Value;
}

#[derive(Debug, Clone, PartialEq)]
pub enum EdgeRequest {
    Get,
    Configure(EdgeConfig),
    SetWeights(String, Vec<f64>),
    SetReseq(Map<String, Value>),
    Counters,
}

const COMMANDS: [&str; 5] = ["get", "configure", "set_weights", "set_reseq", "counters"];

pub fn parse_edge_request(line: &str) -> Result<EdgeRequest, RequestError> {
    let (object, command) = parse_command(line, &COMMANDS)?;
    match command.as_str() {
        "get" | "counters" => {
            check_fields(&object, &["cmd"], "")?;
            Ok(if command == "get" {
                EdgeRequest::Get
            } else {
                EdgeRequest::Counters
            })
        }
        "configure" => {
            check_fields(&object, &["cmd", "config"], "")?;
            let config = object
                .get("config")
                .ok_or_else(|| FieldError::missing("config"))?;
            Ok(EdgeRequest::Configure(EdgeConfig::from_json(config)?))
        }
        "set_weights" => {
            check_fields(&object, &["cmd", "reservation", "weights"], "")?;
            let id = match object.get("reservation") {
                Some(Value::String(id)) => id.clone(),
                Some(other) => {
                    return Err(FieldError::expected("reservation", "a string", other).into())
                }
                None => return Err(FieldError::missing("reservation").into()),
            };
            let weights = match object.get("weights") {
                Some(Value::Array(list)) => list
                    .iter()
                    .map(|w| w.as_f64())
                    .collect::<Option<Vec<f64>>>()
                    .ok_or_else(|| {
                        let what = "a list of numbers";
                        FieldError::new("weights", Problem::Expected { what, got: None })
                    })?,
                Some(other) => return Err(FieldError::expected("weights", "a list", other).into()),
                None => return Err(FieldError::missing("weights").into()),
            };
            Ok(EdgeRequest::SetWeights(id, weights))
        }
        "set_reseq" => {
            let mut known = vec!["cmd"];
            known.extend(RESEQ_FIELDS);
            check_fields(&object, &known, "")?;
            let mut fields = object;
            fields.remove("cmd");
            if fields.is_empty() {
                let problem = Problem::NothingToChange {
                    fields: &RESEQ_FIELDS,
                };
                return Err(FieldError::new("set_reseq", problem).into());
            }
            Ok(EdgeRequest::SetReseq(fields))
        }
        other => Err(unknown_command(other, &COMMANDS)),
    }
}

fn execute(request: EdgeRequest, edge: &dyn EdgeControl) -> Result<Value, FieldError> {
    match request {
        EdgeRequest::Get => {}
        EdgeRequest::Counters => return Ok(json!({"ok": true, "counters": edge.counters()})),
        EdgeRequest::Configure(config) => edge.configure(config),
        EdgeRequest::SetWeights(id, weights) => edge.set_weights(&id, &weights)?,
        EdgeRequest::SetReseq(fields) => {
            let params = reseq_patch(&fields, edge.config().reseq, "")?;
            edge.set_reseq(params);
        }
    }
    Ok(json!({"ok": true, "config": edge.config().to_json()}))
}

/// Answers one request: the reply object, or why it was refused (then nothing changed).
pub fn answer_edge(line: &str, edge: &dyn EdgeControl) -> Result<Value, RequestError> {
    let request = parse_edge_request(line)?;
    Ok(execute(request, edge)?)
}

/// Answers one request line (the reply has no trailing newline).
#[cfg(test)]
pub fn handle_edge_line(line: &str, edge: &dyn EdgeControl) -> String {
    crate::control::reply_line(answer_edge(line, edge))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    struct FakeEdge {
        config: RefCell<EdgeConfig>,
    }

    impl EdgeControl for FakeEdge {
        fn config(&self) -> EdgeConfig {
            self.config.borrow().clone()
        }
        fn configure(&self, config: EdgeConfig) {
            *self.config.borrow_mut() = config;
        }
        fn set_weights(&self, id: &str, weights: &[f64]) -> Result<(), FieldError> {
            let mut config = self.config.borrow_mut();
            let r = config
                .reservations
                .iter_mut()
                .find(|r| r.id == id)
                .ok_or_else(|| FieldError::new("reservation", Problem::NoReservation(id.into())))?;
            if weights.len() != r.paths.len() {
                let count = crate::edge::wrr::WrrError::Count {
                    given: weights.len(),
                    paths: r.paths.len(),
                };
                return Err(count.into());
            }
            for (p, w) in r.paths.iter_mut().zip(weights) {
                p.weight = *w;
            }
            Ok(())
        }
        fn set_reseq(&self, params: ReseqParams) {
            self.config.borrow_mut().reseq = params;
        }
        fn counters(&self) -> Value {
            json!({"to_host": {"resequenced": 3}})
        }
    }

    fn edge() -> FakeEdge {
        let config = EdgeConfig::from_json(&json!({"reservations": [{
            "id": "r1", "paths": [{"vlan": 101}, {"vlan": 102}]
        }]}))
        .unwrap();
        FakeEdge {
            config: RefCell::new(config),
        }
    }

    fn ask(edge: &FakeEdge, line: &str) -> Value {
        serde_json::from_str(&handle_edge_line(line, edge)).unwrap()
    }

    #[test]
    fn weights_knobs_and_counters() {
        let e = edge();
        let reply = ask(
            &e,
            r#"{"cmd":"set_weights","reservation":"r1","weights":[3,1]}"#,
        );
        assert_eq!(
            reply["config"]["reservations"][0]["paths"][0]["weight"],
            3.0
        );
        let reply = ask(
            &e,
            r#"{"cmd":"set_reseq","threshold":40,"hold_ms":20,"lrf":10}"#,
        );
        assert_eq!(reply["config"]["reseq"]["threshold"], 40);
        assert_eq!(e.config().reseq.hold_ns, 20_000_000);
        assert_eq!(
            ask(&e, r#"{"cmd":"counters"}"#)["counters"]["to_host"]["resequenced"],
            3
        );
        let reply = ask(&e, r#"{"cmd":"configure","config":{"reservations":[]}}"#);
        assert_eq!(reply["config"]["reservations"], json!([]));
        assert_eq!(ask(&e, r#"{"cmd":"get"}"#)["ok"], true);
    }

    #[test]
    fn bad_requests_name_the_field_and_change_nothing() {
        let e = edge();
        let before = e.config();
        let cases = [
            ("{", "request"),
            (r#"{"cmd":"reboot"}"#, "cmd"),
            (r#"{"cmd":"get","x":1}"#, "x"),
            (r#"{"cmd":"set_weights","weights":[1,1]}"#, "reservation"),
            (
                r#"{"cmd":"set_weights","reservation":"r1","weights":[1,"a"]}"#,
                "weights",
            ),
            (
                r#"{"cmd":"set_weights","reservation":"r9","weights":[1,1]}"#,
                "reservation",
            ),
            (
                r#"{"cmd":"set_weights","reservation":"r1","weights":[1]}"#,
                "weights",
            ),
            (r#"{"cmd":"set_reseq"}"#, "set_reseq"),
            (
                r#"{"cmd":"set_reseq","threshold":5,"hold_ms":-1}"#,
                "hold_ms",
            ),
            (r#"{"cmd":"set_reseq","size":5}"#, "size"),
            (r#"{"cmd":"configure"}"#, "config"),
            (
                r#"{"cmd":"configure","config":{"reservations":[{"id":"a"}]}}"#,
                "reservations[0].paths",
            ),
        ];
        for (line, field) in cases {
            let reply = ask(&e, line);
            assert_eq!(reply["ok"], false, "{line}");
            let error = reply["error"].as_str().unwrap();
            assert!(error.starts_with(&format!("{field}:")), "{line}: {error}");
            assert_eq!(e.config(), before, "{line}");
        }
    }
}
