//! The running link: per direction, a receiving thread that decides each
//! frame's fate and a sending thread that releases frames at their due time.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::link::config::DirectionConfig;
use crate::link::counters::{CounterSnapshot, Counters};
use crate::link::protocol::{LinkControl, Side};
use crate::link::shaper::{Shaper, Verdict};
use crate::net::packet_socket::{realtime_priority, tighten_timer_slack, PacketSocket, RecvBatch};
use crate::net::timestamped_udp::realtime_ns;

/// Frames taken per system call, both ways.
const BATCH: usize = 64;
/// The sender wakes this long before a frame is due and spins the rest.
const SPIN_NS: u64 = 50_000;

/// A monotonic clock in nanoseconds since the link started.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: Instant,
}

impl Clock {
    pub fn now_ns(self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

/// A frame's arrival on the link's clock: `now_ns` less how long ago the
/// kernel stamped it (by the real-time clock it stamps with). Without a
/// stamp, or with one that makes no sense (in the future, or more than a
/// second old: the real-time clock was set), `now_ns`.
pub fn arrival_ns(now_ns: u64, real_now_ns: u64, kernel_ns: Option<u64>) -> u64 {
    match kernel_ns {
        Some(stamp) if stamp <= real_now_ns && real_now_ns - stamp < 1_000_000_000 => {
            now_ns.saturating_sub(real_now_ns - stamp)
        }
        _ => now_ns,
    }
}

struct Queued {
    due_ns: u64,
    frame: Vec<u8>,
}

/// What one direction's threads and the control socket share.
pub struct Direction {
    config: Mutex<DirectionConfig>,
    /// Bumped on every config change; the receiver re-reads the config when it moves.
    version: AtomicU64,
    cut: AtomicBool,
    pub counters: Counters,
    queue: Mutex<VecDeque<Queued>>,
    frame_queued: Condvar,
    from: Arc<PacketSocket>,
    to: Arc<PacketSocket>,
    /// Only frames of this VLAN are this link's (another link may carry the others).
    vlan: Option<u16>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked aborts the process (panic = "abort"); poisoning cannot be observed.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Direction {
    fn new(
        config: DirectionConfig,
        from: Arc<PacketSocket>,
        to: Arc<PacketSocket>,
        vlan: Option<u16>,
    ) -> Self {
        Direction {
            cut: AtomicBool::new(config.cut),
            config: Mutex::new(config),
            version: AtomicU64::new(0),
            counters: Counters::default(),
            queue: Mutex::new(VecDeque::new()),
            frame_queued: Condvar::new(),
            from,
            to,
            vlan,
        }
    }

    fn receive_loop(&self, clock: Clock, seed: u64) -> io::Result<()> {
        let mut shaper = Shaper::new(lock(&self.config).clone(), seed);
        let mut seen_version = self.version.load(Ordering::Acquire);
        let mut batch = RecvBatch::new(BATCH);
        let mut frames: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BATCH);
        loop {
            match self.from.recv_batch(&mut batch) {
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
            let version = self.version.load(Ordering::Acquire);
            if version != seen_version {
                shaper.reconfigure(lock(&self.config).clone());
                seen_version = version;
            }
            self.take_frames(&batch, clock, &mut frames);
            self.enqueue(&mut shaper, &mut frames);
        }
    }

    /// Copies the frames worth forwarding out of the receive buffers, each
    /// with its arrival time: the kernel's, so that a late wake-up of this
    /// thread does not lengthen the delay.
    fn take_frames(&self, batch: &RecvBatch, clock: Clock, frames: &mut Vec<(u64, Vec<u8>)>) {
        let (now_ns, real_now_ns) = (clock.now_ns(), realtime_ns());
        for (i, received) in batch.received.iter().enumerate() {
            // Our own sends come back as PACKET_OUTGOING where the kernel cannot filter them.
            if received.packet_type == libc::PACKET_OUTGOING {
                continue;
            }
            if self.vlan.is_some() && batch.vlan_id(i) != self.vlan {
                continue;
            }
            Counters::add(&self.counters.received, 1);
            if received.truncated {
                Counters::add(&self.counters.dropped_oversize, 1);
                continue;
            }
            let arrival = arrival_ns(now_ns, real_now_ns, received.kernel_ns);
            frames.push((arrival, batch.frame_to_vec(i)));
        }
    }

    fn enqueue(&self, shaper: &mut Shaper, frames: &mut Vec<(u64, Vec<u8>)>) {
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

    fn send_loop(&self, clock: Clock, realtime: bool) {
        tighten_timer_slack();
        if realtime {
            if let Err(error) = realtime_priority() {
                eprintln!("braid-dp: --realtime: {error} (sending at normal priority)");
            }
        }
        let mut due: Vec<Queued> = Vec::with_capacity(BATCH);
        loop {
            self.wait_for_due(clock, &mut due);
            if self.cut.load(Ordering::Acquire) {
                // A cut loses what is on the wire too.
                Counters::add(&self.counters.dropped_cut, due.len() as u64);
                due.clear();
                continue;
            }
            let frames: Vec<&[u8]> = due.iter().map(|q| q.frame.as_slice()).collect();
            let (sent, failed) = self.to.send_batch(&frames);
            let bytes: usize = due.iter().take(sent).map(|q| q.frame.len()).sum();
            Counters::add(&self.counters.forwarded, sent as u64);
            Counters::add(&self.counters.forwarded_bytes, bytes as u64);
            Counters::add(&self.counters.send_errors, failed as u64);
            due.clear();
        }
    }

    /// Sleeps until the head of the queue is due, then takes every due frame (up to a batch).
    fn wait_for_due(&self, clock: Clock, due: &mut Vec<Queued>) {
        let mut queue = lock(&self.queue);
        loop {
            let now = clock.now_ns();
            while due.len() < BATCH && queue.front().map_or(false, |q| q.due_ns <= now) {
                due.extend(queue.pop_front());
            }
            if !due.is_empty() {
                self.counters
                    .queue_depth
                    .store(queue.len() as u64, Ordering::Relaxed);
                return;
            }
            queue = match queue.front() {
                None => self
                    .frame_queued
                    .wait(queue)
                    .unwrap_or_else(|p| p.into_inner()),
                Some(head) if head.due_ns <= now + SPIN_NS => {
                    // Close to the deadline: spin rather than trust a wake-up's lateness.
                    let target = head.due_ns;
                    drop(queue);
                    while clock.now_ns() < target {
                        std::hint::spin_loop();
                    }
                    lock(&self.queue)
                }
                Some(head) => {
                    // Wake a little early; the last stretch is spun.
                    let wait = Duration::from_nanos(head.due_ns - now - SPIN_NS);
                    let (guard, _) = self
                        .frame_queued
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(|p| p.into_inner());
                    guard
                }
            };
        }
    }
}

/// Both directions of a link between interfaces a and b.
pub struct Link {
    a_to_b: Arc<Direction>,
    b_to_a: Arc<Direction>,
}

impl Link {
    /// Opens both interfaces; nothing runs until [`Link::start`]. With `vlan`,
    /// the link carries that VLAN's frames only.
    pub fn open(a: &str, b: &str, config: &DirectionConfig, vlan: Option<u16>) -> io::Result<Link> {
        let socket_a = Arc::new(PacketSocket::open(a)?);
        let socket_b = Arc::new(PacketSocket::open(b)?);
        Ok(Link {
            a_to_b: Arc::new(Direction::new(
                config.clone(),
                socket_a.clone(),
                socket_b.clone(),
                vlan,
            )),
            b_to_a: Arc::new(Direction::new(config.clone(), socket_b, socket_a, vlan)),
        })
    }

    /// Starts the four threads; a receive error ends the process with a message.
    /// With `realtime`, the sending threads run in the real-time class (their
    /// wake-ups are then on time on a busy host).
    pub fn start(&self, seed: u64, realtime: bool) {
        let clock = Clock {
            epoch: Instant::now(),
        };
        for (index, direction) in [&self.a_to_b, &self.b_to_a].into_iter().enumerate() {
            let receiver = Arc::clone(direction);
            let direction_seed = seed.wrapping_add(index as u64 * 0x9E37_79B9);
            thread::spawn(move || {
                if let Err(error) = receiver.receive_loop(clock, direction_seed) {
                    eprintln!(
                        "braid-dp: receiving on {}: {error}",
                        receiver.from.interface
                    );
                    std::process::exit(1);
                }
            });
            let sender = Arc::clone(direction);
            thread::spawn(move || sender.send_loop(clock, realtime));
        }
    }

    fn direction(&self, side: Side) -> &Direction {
        match side {
            Side::AToB => &self.a_to_b,
            Side::BToA => &self.b_to_a,
        }
    }
}

impl LinkControl for Link {
    fn config(&self, side: Side) -> DirectionConfig {
        lock(&self.direction(side).config).clone()
    }

    fn set_config(&self, side: Side, config: DirectionConfig) {
        let direction = self.direction(side);
        direction.cut.store(config.cut, Ordering::Release);
        *lock(&direction.config) = config;
        direction.version.fetch_add(1, Ordering::AcqRel);
    }

    fn counters(&self, side: Side) -> CounterSnapshot {
        let direction = self.direction(side);
        let drops = direction.from.take_kernel_drops();
        Counters::add(&direction.counters.socket_drops, drops);
        direction.counters.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::arrival_ns;

    #[test]
    fn arrival_counts_from_the_kernel_stamp_when_it_makes_sense() {
        let (now, real) = (5_000_000_000, 1_700_000_000_000_000_000);
        assert_eq!(arrival_ns(now, real, Some(real - 300_000)), now - 300_000);
        assert_eq!(arrival_ns(now, real, None), now);
        assert_eq!(arrival_ns(now, real, Some(real + 10)), now);
        assert_eq!(arrival_ns(now, real, Some(real - 2_000_000_000)), now);
    }
}
