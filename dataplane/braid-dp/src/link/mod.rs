//! The link emulator (`braid-dp link`): per direction, cut, loss, queue
//! limit, rate, delay and jitter, changed at run time over the control socket.

pub mod config;
pub mod counters;
pub mod device;
pub mod direction;
pub mod loss;
pub mod protocol;
pub mod rate;
pub mod runtime;
pub mod schedule;
pub mod shaper;
