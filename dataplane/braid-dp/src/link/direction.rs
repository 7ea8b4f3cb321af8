//! One direction of a link, without its sockets: the settings, the counters
//! and the delay line that the receiving thread, the sending thread and the
//! control socket share. The running link ([`super::runtime`]) and the
//! link device of tests ([`super::device`]) both drive it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::common::sync::lock;
use crate::link::config::DirectionConfig;
use crate::link::counters::Counters;
use crate::link::shaper::{Shaper, Verdict};

/// Frames taken per system call, both ways (and most frames released at once).
pub const BATCH: usize = 64;
/// The sender wakes this long before a frame is due and spins the rest.
const SPIN_NS: u64 = 50_000;

/// A frame in the delay line, and when it leaves.
pub struct Queued {
    pub due_ns: u64,
    pub frame: Vec<u8>,
}

/// What one direction's threads and the control socket share.
pub struct DirectionState {
    config: Mutex<DirectionConfig>,
    /// Bumped on every config change; the receiver re-reads the config when it moves.
    version: AtomicU64,
    cut: AtomicBool,
    pub counters: Counters,
    queue: Mutex<VecDeque<Queued>>,
    frame_queued: Condvar,
    /// Only frames of this VLAN are this link's (another link may carry the others).
    vlan: Option<u16>,
}

impl DirectionState {
    pub fn new(config: DirectionConfig, vlan: Option<u16>) -> DirectionState {
        DirectionState {
            cut: AtomicBool::new(config.cut),
            config: Mutex::new(config),
            version: AtomicU64::new(0),
            counters: Counters::default(),
            queue: Mutex::new(VecDeque::new()),
            frame_queued: Condvar::new(),
            vlan,
        }
    }

    pub fn config(&self) -> DirectionConfig {
        lock(&self.config).clone()
    }

    /// A new config: the cut applies at once (to queued frames too), the rest
    /// from the next frame the receiver takes.
    pub fn set_config(&self, config: DirectionConfig) {
        self.cut.store(config.cut, Ordering::Release);
        *lock(&self.config) = config;
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// A shaper for the receiver, with the current config; `seen` is the config version it has.
    pub fn shaper(&self, seed: u64, seen: &mut u64) -> Shaper {
        *seen = self.version.load(Ordering::Acquire);
        Shaper::new(self.config(), seed)
    }

    /// Gives `shaper` the current config if it changed since version `seen`.
    pub fn refresh(&self, shaper: &mut Shaper, seen: &mut u64) {
        let version = self.version.load(Ordering::Acquire);
        if version != *seen {
            shaper.reconfigure(self.config());
            *seen = version;
        }
    }

    /// Whether a frame of this VLAN (None: untagged) is this link's to carry.
    pub fn carries(&self, vlan: Option<u16>) -> bool {
        self.vlan.is_none() || vlan == self.vlan
    }

    /// Decides each frame's fate (arrival time, frame) and queues those that depart.
    pub fn enqueue(&self, shaper: &mut Shaper, frames: &mut Vec<(u64, Vec<u8>)>) {
        let mut queue = lock(&self.queue);
        let was_empty = queue.is_empty();
        for (arrival_ns, frame) in frames.drain(..) {
            match shaper.admit(arrival_ns, frame.len(), queue.len()) {
                Verdict::Depart(due_ns) => queue.push_back(Queued { due_ns, frame }),
                Verdict::DroppedCut => Counters::add(&self.counters.dropped_cut, 1),
                Verdict::DroppedLoss => Counters::add(&self.counters.dropped_loss, 1),
                Verdict::DroppedQueueFull => Counters::add(&self.counters.dropped_queue, 1),
            }
        }
        self.counters
            .queue_depth
            .store(queue.len() as u64, Ordering::Relaxed);
        // Due times never decrease, so only a frame into an empty queue changes the next deadline.
        if was_empty && !queue.is_empty() {
            self.frame_queued.notify_one();
        }
    }

    /// When the head of the queue is due, if anything is queued.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn next_due(&self) -> Option<u64> {
        lock(&self.queue).front().map(|q| q.due_ns)
    }

    /// Moves the frames due by `now_ns` (up to a batch) into `due`; true if any.
    fn take_due(&self, queue: &mut VecDeque<Queued>, now_ns: u64, due: &mut Vec<Queued>) -> bool {
        while due.len() < BATCH && queue.front().map_or(false, |q| q.due_ns <= now_ns) {
            due.extend(queue.pop_front());
        }
        if due.is_empty() {
            return false;
        }
        self.counters
            .queue_depth
            .store(queue.len() as u64, Ordering::Relaxed);
        true
    }

    /// The frames due by `now_ns` (up to a batch), without waiting.
    pub fn due_now(&self, now_ns: u64, due: &mut Vec<Queued>) {
        let mut queue = lock(&self.queue);
        self.take_due(&mut queue, now_ns, due);
    }

    /// Sleeps until the head of the queue is due, then takes every due frame
    /// (up to a batch). `now` reads the link's clock.
    pub fn wait_for_due<F: Fn() -> u64>(&self, now: F, due: &mut Vec<Queued>) {
        let mut queue = lock(&self.queue);
        loop {
            let now_ns = now();
            if self.take_due(&mut queue, now_ns, due) {
                return;
            }
            queue = match queue.front() {
                None => self
                    .frame_queued
                    .wait(queue)
                    .unwrap_or_else(|p| p.into_inner()),
                Some(head) if head.due_ns <= now_ns + SPIN_NS => {
                    // Close to the deadline: spin rather than trust a wake-up's lateness.
                    let target = head.due_ns;
                    drop(queue);
                    while now() < target {
                        std::hint::spin_loop();
                    }
                    lock(&self.queue)
                }
                Some(head) => {
                    // Wake a little early; the last stretch is spun.
                    let wait = Duration::from_nanos(head.due_ns - now_ns - SPIN_NS);
                    let (guard, _) = self
                        .frame_queued
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(|p| p.into_inner());
                    guard
                }
            };
        }
    }

    /// Whether due frames may leave: a cut loses what is on the wire too
    /// (they are counted and `due` is emptied).
    pub fn may_send(&self, due: &mut Vec<Queued>) -> bool {
        if self.cut.load(Ordering::Acquire) {
            Counters::add(&self.counters.dropped_cut, due.len() as u64);
            due.clear();
            return false;
        }
        true
    }

    /// Counts `sent` frames of `bytes` in all as forwarded, `failed` as send errors.
    pub fn count_sent(&self, sent: usize, bytes: usize, failed: usize) {
        Counters::add(&self.counters.forwarded, sent as u64);
        Counters::add(&self.counters.forwarded_bytes, bytes as u64);
        Counters::add(&self.counters.send_errors, failed as u64);
    }
}
