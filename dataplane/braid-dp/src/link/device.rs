//! The link emulator as a [`Device`]: both directions' settings, counters,
//! shapers and delay lines, without sockets. The running link
//! ([`super::runtime::Link`]) is this device plus two AF_PACKET sockets and
//! four threads; tests drive it on simulated time. Port A is the link's `a`
//! side, port B its `b` side.

use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::common::sync::lock;
use crate::device::{check_size, Device, DeviceError, Emitted, Port};
use crate::frame::vlan_id;
use crate::link::config::DirectionConfig;
use crate::link::counters::{CounterSnapshot, Counters};
use crate::link::direction::{DirectionState, Queued};
use crate::link::protocol::{answer, LinkControl, Side};
use crate::link::shaper::Shaper;

/// One direction: what its threads share, and the receiver's shaper with
/// the config version it has.
pub struct Lane {
    pub state: DirectionState,
    shaper: Mutex<(Shaper, u64)>,
}

impl Lane {
    fn new(config: &DirectionConfig, seed: u64, vlan: Option<u16>) -> Lane {
        let state = DirectionState::new(config.clone(), vlan);
        let mut seen_version = 0;
        let shaper = state.shaper(seed, &mut seen_version);
        Lane {
            state,
            shaper: Mutex::new((shaper, seen_version)),
        }
    }

    /// Decides the fate of frames (arrival time, frame) taken in together and
    /// queues those that depart: one lock of the delay line for the batch.
    pub fn admit(&self, frames: &mut Vec<(u64, Vec<u8>)>) {
        let mut guard = lock(&self.shaper);
        let (shaper, seen_version) = &mut *guard;
        self.state.refresh(shaper, seen_version);
        self.state.enqueue(shaper, frames);
    }

    /// Emits what is due by `now_ns` out of `port`, as the sending thread does.
    fn release(&self, now_ns: u64, port: Port, out: &mut Vec<Emitted>) {
        let mut due: Vec<Queued> = Vec::new();
        loop {
            self.state.due_now(now_ns, &mut due);
            if due.is_empty() {
                return;
            }
            if self.state.may_send(&mut due) {
                out.extend(due.drain(..).map(|q| (port, q.frame)));
            }
        }
    }
}

/// The seed of direction `index` (0: a → b, 1: b → a) of a link seeded with `seed`.
fn direction_seed(seed: u64, index: u64) -> u64 {
    seed.wrapping_add(index * 0x9E37_79B9)
}

/// A link between ports A and B, both directions starting with the same config.
pub struct LinkDevice {
    a_to_b: Lane,
    b_to_a: Lane,
}

impl LinkDevice {
    /// As `braid-dp link` with these settings, `--seed` and `--vlan`.
    pub fn new(config: &DirectionConfig, seed: u64, vlan: Option<u16>) -> LinkDevice {
        LinkDevice {
            a_to_b: Lane::new(config, direction_seed(seed, 0), vlan),
            b_to_a: Lane::new(config, direction_seed(seed, 1), vlan),
        }
    }

    pub fn lane(&self, side: Side) -> &Lane {
        match side {
            Side::AToB => &self.a_to_b,
            Side::BToA => &self.b_to_a,
        }
    }

    /// The direction of frames taken in on `port`.
    fn taking(&self, port: Port) -> &Lane {
        match port {
            Port::A => &self.a_to_b,
            Port::B => &self.b_to_a,
        }
    }
}

impl LinkControl for LinkDevice {
    fn config(&self, side: Side) -> DirectionConfig {
        self.lane(side).state.config()
    }

    fn set_config(&self, side: Side, config: DirectionConfig) {
        self.lane(side).state.set_config(config);
    }

    fn counters(&self, side: Side) -> CounterSnapshot {
        self.lane(side).state.counters.snapshot()
    }
}

impl Device for LinkDevice {
    fn receive(
        &self,
        now_ns: u64,
        port: Port,
        frame: Vec<u8>,
        out: &mut Vec<Emitted>,
    ) -> Result<(), DeviceError> {
        let lane = self.taking(port);
        if !lane.state.carries(vlan_id(&frame)) {
            return Ok(());
        }
        if let Err(error) = check_size(&frame) {
            self.oversize(port);
            return Err(error);
        }
        Counters::add(&lane.state.counters.received, 1);
        lane.admit(&mut vec![(now_ns, frame)]);
        // A frame due now leaves now, as the sending thread would send it.
        lane.release(now_ns, port.other(), out);
        Ok(())
    }

    fn oversize(&self, port: Port) {
        let counters = &self.taking(port).state.counters;
        Counters::add(&counters.received, 1);
        Counters::add(&counters.dropped_oversize, 1);
    }

    fn poll(&self, now_ns: u64, out: &mut Vec<Emitted>) {
        self.a_to_b.release(now_ns, Port::B, out);
        self.b_to_a.release(now_ns, Port::A, out);
    }

    fn next_deadline(&self) -> Option<u64> {
        let heads = [self.a_to_b.state.next_due(), self.b_to_a.state.next_due()];
        heads.iter().flatten().min().copied()
    }

    fn sent(&self, port: Port, frames: &[Vec<u8>], sent: usize, failed: usize) {
        // Frames leaving by B went a → b.
        let lane = self.taking(port.other());
        let bytes: usize = frames.iter().take(sent).map(Vec::len).sum();
        lane.state.count_sent(sent, bytes, failed);
    }

    fn control(&self, line: &str) -> Result<Value, DeviceError> {
        Ok(answer(line, self)?)
    }

    fn stats(&self) -> Value {
        let mut counters = Map::new();
        for side in Side::BOTH {
            counters.insert(side.name().to_string(), self.counters(side).to_json());
        }
        Value::Object(counters)
    }
}
