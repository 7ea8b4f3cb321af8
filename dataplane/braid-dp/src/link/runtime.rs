//! The running link: per direction, a receiving thread that decides each
//! frame's fate and a sending thread that releases frames at their due time,
//! over AF_PACKET sockets (root needed).

use std::io;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crate::control::LineHandler;
use crate::device::DeviceHandler;
use crate::link::config::DirectionConfig;
use crate::link::counters::Counters;
use crate::link::device::{Lane, LinkDevice};
use crate::link::direction::{Queued, BATCH};
use crate::link::protocol::Side;
use crate::net::packet_socket::{realtime_priority, tighten_timer_slack, PacketSocket, RecvBatch};
use crate::net::timestamped_udp::realtime_ns;

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

/// Frames of one direction: from which socket to which, on which lane.
struct Carrier {
    device: Arc<LinkDevice>,
    side: Side,
    from: Arc<PacketSocket>,
    to: Arc<PacketSocket>,
}

impl Carrier {
    fn lane(&self) -> &Lane {
        self.device.lane(self.side)
    }

    fn receive_loop(&self, clock: Clock) -> io::Result<()> {
        let mut batch = RecvBatch::new(BATCH);
        let mut frames: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BATCH);
        loop {
            match self.from.recv_batch(&mut batch) {
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
            self.take_frames(&batch, clock, &mut frames);
            self.lane().admit(&mut frames);
        }
    }

    /// Copies the frames worth forwarding out of the receive buffers, each
    /// with its arrival time: the kernel's, so that a late wake-up of this
    /// thread does not lengthen the delay.
    fn take_frames(&self, batch: &RecvBatch, clock: Clock, frames: &mut Vec<(u64, Vec<u8>)>) {
        let (now_ns, real_now_ns) = (clock.now_ns(), realtime_ns());
        let state = &self.lane().state;
        for (i, received) in batch.received.iter().enumerate() {
            // Our own sends come back as PACKET_OUTGOING where the kernel cannot filter them.
            if received.packet_type == libc::PACKET_OUTGOING {
                continue;
            }
            if !state.carries(batch.vlan_id(i)) {
                continue;
            }
            Counters::add(&state.counters.received, 1);
            if received.truncated {
                Counters::add(&state.counters.dropped_oversize, 1);
                continue;
            }
            let arrival = arrival_ns(now_ns, real_now_ns, received.kernel_ns);
            frames.push((arrival, batch.frame_to_vec(i)));
        }
    }

    fn send_loop(&self, clock: Clock, realtime: bool) {
        tighten_timer_slack();
        if realtime {
            if let Err(error) = realtime_priority() {
                eprintln!("braid-dp: --realtime: {error} (sending at normal priority)");
            }
        }
        let state = &self.lane().state;
        let mut due: Vec<Queued> = Vec::with_capacity(BATCH);
        loop {
            state.wait_for_due(|| clock.now_ns(), &mut due);
            if !state.may_send(&mut due) {
                continue;
            }
            let frames: Vec<&[u8]> = due.iter().map(|q| q.frame.as_slice()).collect();
            let (sent, failed) = self.to.send_batch(&frames);
            let bytes: usize = frames.iter().take(sent).map(|f| f.len()).sum();
            state.count_sent(sent, bytes, failed);
            due.clear();
        }
    }
}

/// A link between interfaces a and b: a [`LinkDevice`] fed by their sockets.
pub struct Link {
    device: Arc<LinkDevice>,
    a: Arc<PacketSocket>,
    b: Arc<PacketSocket>,
}

impl Link {
    /// Opens both interfaces; nothing runs until [`Link::start`]. With `vlan`,
    /// the link carries that VLAN's frames only; `seed` seeds loss and jitter.
    pub fn open(
        a: &str,
        b: &str,
        config: &DirectionConfig,
        seed: u64,
        vlan: Option<u16>,
    ) -> io::Result<Link> {
        let a = Arc::new(PacketSocket::open(a)?);
        let b = Arc::new(PacketSocket::open(b)?);
        let device = Arc::new(LinkDevice::new(config, seed, vlan));
        Ok(Link { device, a, b })
    }

    /// Starts the four threads; a receive error ends the process with a message.
    /// With `realtime`, the sending threads run in the real-time class (their
    /// wake-ups are then on time on a busy host).
    pub fn start(&self, realtime: bool) {
        let clock = Clock {
            epoch: Instant::now(),
        };
        for side in Side::BOTH {
            let (from, to) = match side {
                Side::AToB => (&self.a, &self.b),
                Side::BToA => (&self.b, &self.a),
            };
            let carrier = Arc::new(Carrier {
                device: Arc::clone(&self.device),
                side,
                from: Arc::clone(from),
                to: Arc::clone(to),
            });
            let receiver = Arc::clone(&carrier);
            thread::spawn(move || {
                if let Err(error) = receiver.receive_loop(clock) {
                    eprintln!(
                        "braid-dp: receiving on {}: {error}",
                        receiver.from.interface
                    );
                    std::process::exit(1);
                }
            });
            thread::spawn(move || carrier.send_loop(clock, realtime));
        }
    }
}

impl LineHandler for Link {
    fn handle(&self, line: &str) -> String {
        // What the kernel dropped before braid-dp read it (each read starts the kernel's count again).
        for (side, socket) in [(Side::AToB, &self.a), (Side::BToA, &self.b)] {
            let drops = socket.take_kernel_drops();
            Counters::add(&self.device.lane(side).state.counters.socket_drops, drops);
        }
        DeviceHandler(Arc::clone(&self.device)).handle(line)
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
