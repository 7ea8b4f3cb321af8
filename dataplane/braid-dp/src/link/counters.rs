//! What happened to the packets of one direction, counted without locks.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters shared by a direction's threads and the control socket.
#[derive(Debug, Default)]
pub struct Counters {
    pub received: AtomicU64,
    pub forwarded: AtomicU64,
    pub forwarded_bytes: AtomicU64,
    pub dropped_loss: AtomicU64,
    pub dropped_queue: AtomicU64,
    pub dropped_cut: AtomicU64,
    pub dropped_oversize: AtomicU64,
    pub send_errors: AtomicU64,
    /// Frames the kernel dropped before we read them (socket buffer full).
    pub socket_drops: AtomicU64,
    pub queue_depth: AtomicU64,
}

/// A copy of the counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    pub received: u64,
    pub forwarded: u64,
    pub forwarded_bytes: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub dropped_cut: u64,
    pub dropped_oversize: u64,
    pub send_errors: u64,
    pub socket_drops: u64,
    pub queue_depth: u64,
}

impl Counters {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> CounterSnapshot {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CounterSnapshot {
            received: read(&self.received),
            forwarded: read(&self.forwarded),
            forwarded_bytes: read(&self.forwarded_bytes),
            dropped_loss: read(&self.dropped_loss),
            dropped_queue: read(&self.dropped_queue),
            dropped_cut: read(&self.dropped_cut),
            dropped_oversize: read(&self.dropped_oversize),
            send_errors: read(&self.send_errors),
            socket_drops: read(&self.socket_drops),
            queue_depth: read(&self.queue_depth),
        }
    }
}

impl CounterSnapshot {
    pub fn to_json(self) -> serde_json::Value {
        serde_json::json!({
            "received": self.received,
            "forwarded": self.forwarded,
            "forwarded_bytes": self.forwarded_bytes,
            "dropped_loss": self.dropped_loss,
            "dropped_queue": self.dropped_queue,
            "dropped_cut": self.dropped_cut,
            "dropped_oversize": self.dropped_oversize,
            "send_errors": self.send_errors,
            "socket_drops": self.socket_drops,
            "queue_depth": self.queue_depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_reads_what_was_added() {
        let counters = Counters::default();
        Counters::add(&counters.forwarded, 3);
        Counters::add(&counters.forwarded_bytes, 192);
        let snap = counters.snapshot();
        assert_eq!((snap.forwarded, snap.forwarded_bytes), (3, 192));
        let json = snap.to_json();
        assert_eq!(json["forwarded"], 3);
        assert_eq!(json["dropped_queue"], 0);
    }
}
