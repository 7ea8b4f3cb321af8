//! The control side shared by every element: a Unix stream socket carrying
//! one JSON request per line and one JSON reply per line.

pub mod server;

/// Answers request lines: what the control server needs of an element.
pub trait LineHandler {
    /// The reply to one request line (without a trailing newline).
    fn handle(&self, line: &str) -> String;
}
