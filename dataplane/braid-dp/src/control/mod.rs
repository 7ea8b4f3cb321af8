//! The control side shared by every element: a Unix stream socket carrying
//! one JSON request per line and one JSON reply per line. A refused request
//! gets `{"ok": false, "error": "<field>: <why>"}` and changes nothing.

use std::error::Error;
use std::fmt;

use serde_json::{json, Map, Value};

use crate::common::field::{FieldError, Problem};

pub mod server;

/// Answers request lines: what the control server needs of an element.
pub trait LineHandler {
    /// The reply to one request line (without a trailing newline).
    fn handle(&self, line: &str) -> String;
}

/// Why a request was refused.
#[derive(Debug)]
pub enum RequestError {
    /// `request: not valid JSON (...)`
    NotJson(serde_json::Error),
    /// `request: expected a JSON object`
    NotAnObject,
    /// `request: longer than N bytes` (the connection is then closed)
    TooLong(u64),
    /// A field of the request (or of the config it carries) is wrong.
    Field(FieldError),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NotJson(error) => write!(f, "request: not valid JSON ({error})"),
            RequestError::NotAnObject => write!(f, "request: expected a JSON object"),
            RequestError::TooLong(limit) => write!(f, "request: longer than {limit} bytes"),
            RequestError::Field(error) => error.fmt(f),
        }
    }
}

impl Error for RequestError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            RequestError::NotJson(error) => Some(error),
            RequestError::Field(error) => Some(error),
            _ => None,
        }
    }
}

impl From<FieldError> for RequestError {
    fn from(error: FieldError) -> RequestError {
        RequestError::Field(error)
    }
}

/// A request line as an object, with its `cmd` (one of `commands`).
pub fn parse_command(
    line: &str,
    commands: &'static [&'static str],
) -> Result<(Map<String, Value>, String), RequestError> {
    let object = match serde_json::from_str(line).map_err(RequestError::NotJson)? {
        Value::Object(object) => object,
        _ => return Err(RequestError::NotAnObject),
    };
    let command = match object.get("cmd") {
        Some(Value::String(command)) => command.clone(),
        Some(other) => return Err(FieldError::expected("cmd", "a string", other).into()),
        None => {
            let problem = Problem::MissingCommand { known: commands };
            return Err(FieldError::new("cmd", problem).into());
        }
    };
    Ok((object, command))
}

/// `cmd: unknown command "x" (one of ...)`.
pub fn unknown_command(name: &str, known: &'static [&'static str]) -> RequestError {
    let problem = Problem::UnknownCommand {
        name: name.to_string(),
        known,
    };
    FieldError::new("cmd", problem).into()
}

/// The reply line to a request: the reply object, or the error's.
pub fn reply_line<E: fmt::Display>(reply: Result<Value, E>) -> String {
    match reply {
        Ok(value) => value.to_string(),
        Err(error) => json!({"ok": false, "error": error.to_string()}).to_string(),
    }
}
