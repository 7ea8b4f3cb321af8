//! A device with faults injected into what it emits: lost frames, extra
//! delay (which reorders), duplicates, cuts, and failed calls. Every draw
//! comes from one seeded generator and every failed call is named by its
//! index, so a run is the same each time: a failing test names its seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::common::rng::SplitMix64;
use crate::common::sync::lock;
use crate::device::{Call, Device, DeviceError, Emitted, Port};

/// Which faults, when. The default injects none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// Seeds the draws below.
    pub seed: u64,
    /// Probability that an emitted frame is lost.
    pub drop: f64,
    /// Probability that an emitted frame goes out twice (each copy delayed on its own).
    pub duplicate: f64,
    /// Every emitted frame is held a further uniform draw in [0, `delay_ns`]:
    /// frames overtake one another.
    pub delay_ns: u64,
    /// Windows `[start, end)` of time in which the device's output is cut:
    /// frames it emits then, or that the extra delay would release then, are lost.
    pub cuts: Vec<(u64, u64)>,
    /// Receive calls (counted from 0) that fail, the frame not taken in.
    pub fail_receive: Vec<u64>,
    /// Control calls (counted from 0) that fail, nothing changed.
    pub fail_control: Vec<u64>,
}

/// What the faults did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub dropped: u64,
    pub duplicated: u64,
    pub delayed: u64,
    pub cut: u64,
    pub failed_calls: u64,
}

/// A frame held back: due time, then emission order (so equal times keep their order).
struct Delayed {
    due_ns: u64,
    order: u64,
    port: Port,
    frame: Vec<u8>,
}

impl PartialEq for Delayed {
    fn eq(&self, other: &Self) -> bool {
        (self.due_ns, self.order) == (other.due_ns, other.order)
    }
}

impl Eq for Delayed {}

impl PartialOrd for Delayed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Delayed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.due_ns, self.order).cmp(&(other.due_ns, other.order))
    }
}

struct State {
    rng: SplitMix64,
    held: BinaryHeap<Reverse<Delayed>>,
    order: u64,
    receive_calls: u64,
    control_calls: u64,
    counts: FaultCounts,
}

/// `inner` with `faults` applied to its frames and calls.
pub struct Faulty<D> {
    inner: D,
    faults: Faults,
    state: Mutex<State>,
}

impl<D: Device> Faulty<D> {
    pub fn new(inner: D, faults: Faults) -> Faulty<D> {
        let state = State {
            rng: SplitMix64::new(faults.seed),
            held: BinaryHeap::new(),
            order: 0,
            receive_calls: 0,
            control_calls: 0,
            counts: FaultCounts::default(),
        };
        Faulty {
            inner,
            faults,
            state: Mutex::new(state),
        }
    }

    pub fn inner(&self) -> &D {
        &self.inner
    }

    pub fn counts(&self) -> FaultCounts {
        lock(&self.state).counts
    }

    fn cut_at(&self, now_ns: u64) -> bool {
        self.faults
            .cuts
            .iter()
            .any(|&(start, end)| (start..end).contains(&now_ns))
    }

    /// Counts call `kind` and fails it if the faults say so.
    fn call(&self, kind: Call) -> Result<(), DeviceError> {
        let mut state = lock(&self.state);
        let (index, failing) = match kind {
            Call::Receive => (&mut state.receive_calls, &self.faults.fail_receive),
            Call::Control => (&mut state.control_calls, &self.faults.fail_control),
        };
        let this = *index;
        *index += 1;
        if failing.contains(&this) {
            state.counts.failed_calls += 1;
            return Err(DeviceError::Injected {
                call: kind,
                index: this,
            });
        }
        Ok(())
    }

    /// Applies the faults to what the inner device emitted at `now_ns`.
    fn disturb(&self, now_ns: u64, emitted: Vec<Emitted>, out: &mut Vec<Emitted>) {
        let cut = self.cut_at(now_ns);
        let mut state = lock(&self.state);
        for (port, frame) in emitted {
            if cut {
                state.counts.cut += 1;
                continue;
            }
            if state.rng.chance(self.faults.drop) {
                state.counts.dropped += 1;
                continue;
            }
            let mut copies = vec![frame];
            if state.rng.chance(self.faults.duplicate) {
                state.counts.duplicated += 1;
                copies.push(copies[0].clone());
            }
            for frame in copies {
                let extra = match self.faults.delay_ns {
                    0 => 0,
                    most => (state.rng.next_f64() * (most + 1) as f64) as u64,
                };
                if extra == 0 {
                    out.push((port, frame));
                    continue;
                }
                state.counts.delayed += 1;
                state.order += 1;
                let order = state.order;
                state.held.push(Reverse(Delayed {
                    due_ns: now_ns + extra,
                    order,
                    port,
                    frame,
                }));
            }
        }
    }

    /// Releases held frames due by `now_ns`; those due inside a cut are lost.
    fn release(&self, now_ns: u64, out: &mut Vec<Emitted>) {
        let mut state = lock(&self.state);
        while state
            .held
            .peek()
            .map_or(false, |Reverse(d)| d.due_ns <= now_ns)
        {
            if let Some(Reverse(delayed)) = state.held.pop() {
                if self.cut_at(delayed.due_ns) {
                    state.counts.cut += 1;
                } else {
                    out.push((delayed.port, delayed.frame));
                }
            }
        }
    }
}

impl<D: Device> Device for Faulty<D> {
    fn receive(
        &self,
        now_ns: u64,
        port: Port,
        frame: Vec<u8>,
        out: &mut Vec<Emitted>,
    ) -> Result<(), DeviceError> {
        self.call(Call::Receive)?;
        let mut emitted = Vec::new();
        let result = self.inner.receive(now_ns, port, frame, &mut emitted);
        self.disturb(now_ns, emitted, out);
        result
    }

    fn oversize(&self, port: Port) {
        self.inner.oversize(port);
    }

    fn poll(&self, now_ns: u64, out: &mut Vec<Emitted>) {
        let mut emitted = Vec::new();
        self.inner.poll(now_ns, &mut emitted);
        self.disturb(now_ns, emitted, out);
        self.release(now_ns, out);
    }

    fn next_deadline(&self) -> Option<u64> {
        let held = lock(&self.state).held.peek().map(|Reverse(d)| d.due_ns);
        match (self.inner.next_deadline(), held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn sent(&self, port: Port, frames: &[Vec<u8>], sent: usize, failed: usize) {
        self.inner.sent(port, frames, sent, failed);
    }

    fn control(&self, line: &str) -> Result<Value, DeviceError> {
        self.call(Call::Control)?;
        self.inner.control(line)
    }

    /// The inner device's counters, with the faults' under `faults`.
    fn stats(&self) -> Value {
        let mut stats = self.inner.stats();
        let c = self.counts();
        if let Some(object) = stats.as_object_mut() {
            object.insert(
                "faults".to_string(),
                json!({
                    "dropped": c.dropped,
                    "duplicated": c.duplicated,
                    "delayed": c.delayed,
                    "cut": c.cut,
                    "failed_calls": c.failed_calls,
                }),
            );
        }
        stats
    }
}
