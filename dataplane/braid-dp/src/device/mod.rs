//! What every data-plane element does, whatever carries its frames: take a
//! frame in on one of its two ports, emit frames out (at once, or later when
//! polled), answer control requests and report its counters.
//!
//! [`Device`] is that contract without I/O and without a clock: time comes
//! in as an argument. The link ([`crate::link::device::LinkDevice`]) and the
//! edge ([`crate::edge::device::EdgeDevice`]) implement it over the same
//! shared state and per-frame code their running forms drive from AF_PACKET
//! sockets; [`fault::Faulty`] wraps any device and injects drops, delays,
//! duplicates, cuts and errors, deterministically. Tests wire devices
//! together and run them on simulated time, without root.

use std::error::Error;
use std::fmt;

use serde_json::Value;

use crate::control::RequestError;

#[cfg(test)]
pub mod fault;

#[cfg(test)]
mod tests;

/// One of a device's two sides: a link's `a` and `b`; an edge's host (A) and network (B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Port {
    A,
    B,
}

impl Port {
    /// The side a frame taken in on this one leaves by.
    pub fn other(self) -> Port {
        match self {
            Port::A => Port::B,
            Port::B => Port::A,
        }
    }
}

/// A frame a device emits, and the port it leaves by.
pub type Emitted = (Port, Vec<u8>);

/// Which call a fault was injected into.
// Only the fault-injecting wrapper of tests makes one.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Receive,
    Control,
}

/// Why a device refused a call.
#[derive(Debug)]
pub enum DeviceError {
    /// A frame longer than an element takes; it was counted (`dropped_oversize`) and dropped.
    Oversize { len: usize, max: usize },
    /// A control request was refused; nothing changed.
    Refused(RequestError),
    /// The fault-injecting wrapper failed call number `index` (from 0) of this kind.
    #[cfg_attr(not(test), allow(dead_code))]
    Injected { call: Call, index: u64 },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::Oversize { len, max } => {
                write!(f, "frame: {len} bytes, above the {max} an element takes")
            }
            DeviceError::Refused(error) => error.fmt(f),
            DeviceError::Injected { call, index } => {
                write!(f, "injected fault: {call:?} call {index} failed")
            }
        }
    }
}

impl Error for DeviceError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            DeviceError::Refused(error) => Some(error),
            _ => None,
        }
    }
}

impl From<RequestError> for DeviceError {
    fn from(error: RequestError) -> DeviceError {
        DeviceError::Refused(error)
    }
}

/// A data-plane element. Time is an argument (nanoseconds on the caller's
/// monotonic clock, never decreasing); the methods take `&self` because a
/// running element is shared by its receiving threads, its sending threads
/// and its control socket (implementations lock per direction).
///
/// Whoever carries the frames (the running element's sockets, or a test)
/// receives them, hands them to [`Device::receive`], sends what comes out and
/// says how that went with [`Device::sent`].
pub trait Device {
    /// Takes a frame (as on the wire, 802.1Q tag included) that arrived on
    /// `port` at `now_ns`; frames that may leave at once are appended to `out`.
    fn receive(
        &self,
        now_ns: u64,
        port: Port,
        frame: Vec<u8>,
        out: &mut Vec<Emitted>,
    ) -> Result<(), DeviceError>;

    /// A frame too long to take arrived on `port` (the carrier dropped it): counted.
    fn oversize(&self, port: Port);

    /// Appends the frames that have come due by `now_ns` (a link's delay
    /// line, an edge's hold time); call it at [`Device::next_deadline`] or often.
    fn poll(&self, now_ns: u64, out: &mut Vec<Emitted>);

    /// When a poll may next emit something; None when only a frame can make it.
    // The running elements poll on their own schedule (the link's senders
    // wait on the delay line, the edge's network side wakes every
    // millisecond): only runs on simulated time ask.
    #[cfg_attr(not(test), allow(dead_code))]
    fn next_deadline(&self) -> Option<u64>;

    /// What became of `frames`, emitted on `port`: the first `sent` went out,
    /// `failed` could not be sent.
    fn sent(&self, port: Port, frames: &[Vec<u8>], sent: usize, failed: usize);

    /// Answers one control request line (the protocol of the element's
    /// control socket): the reply object, or why it was refused.
    fn control(&self, line: &str) -> Result<Value, DeviceError>;

    /// The counters, as the control socket's `counters` reply carries them.
    fn stats(&self) -> Value;
}

/// Lets the control server drive a device: its replies, or its refusals as
/// `{"ok": false, "error": ...}`.
pub struct DeviceHandler<D>(pub std::sync::Arc<D>);

impl<D: Device> crate::control::LineHandler for DeviceHandler<D> {
    fn handle(&self, line: &str) -> String {
        crate::control::reply_line(self.0.control(line))
    }
}

/// Refuses a frame longer than an element takes: [`crate::frame::MAX_FRAME`]
/// read whole, plus the 802.1Q tag the kernel took off and braid-dp puts
/// back. (The running elements' sockets cut longer frames short and call
/// [`Device::oversize`] instead.)
pub fn check_size(frame: &[u8]) -> Result<(), DeviceError> {
    let max = crate::frame::MAX_FRAME + 4;
    if frame.len() > max {
        return Err(DeviceError::Oversize {
            len: frame.len(),
            max,
        });
    }
    Ok(())
}
