//! The multipath edge as a [`Device`]: its config, its two directions'
//! per-frame logic and counters, without sockets. The running edge
//! ([`super::runtime::Edge`]) is this device plus two AF_PACKET sockets and
//! a thread per direction; tests drive it on simulated time. Port A is the
//! host's side, port B the network's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::common::field::FieldError;
use crate::common::sync::lock;
use crate::device::{check_size, Device, DeviceError, Emitted, Port};
use crate::edge::config::EdgeConfig;
use crate::edge::logic::{Inbound, Outbound};
use crate::edge::protocol::{answer_edge, EdgeControl};
use crate::edge::reseq::ReseqParams;

#[derive(Debug, Default)]
struct SideCounters {
    received: AtomicU64,
    sent: AtomicU64,
    send_errors: AtomicU64,
    dropped_oversize: AtomicU64,
}

impl SideCounters {
    fn to_json(&self) -> Value {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "received": read(&self.received),
            "sent": read(&self.sent),
            "send_errors": read(&self.send_errors),
            "dropped_oversize": read(&self.dropped_oversize),
        })
    }
}

fn add(counter: &AtomicU64, n: usize) {
    counter.fetch_add(n as u64, Ordering::Relaxed);
}

/// An edge between a host (port A) and the network (port B).
pub struct EdgeDevice {
    config: Mutex<EdgeConfig>,
    outbound: Mutex<Outbound>,
    inbound: Mutex<Inbound>,
    to_net: SideCounters,
    to_host: SideCounters,
}

impl EdgeDevice {
    pub fn new(config: EdgeConfig) -> EdgeDevice {
        EdgeDevice {
            outbound: Mutex::new(Outbound::new(&config)),
            inbound: Mutex::new(Inbound::new(&config)),
            config: Mutex::new(config),
            to_net: SideCounters::default(),
            to_host: SideCounters::default(),
        }
    }

    /// The counters of frames taken in on `port`.
    fn counters_from(&self, port: Port) -> &SideCounters {
        match port {
            Port::A => &self.to_net,
            Port::B => &self.to_host,
        }
    }
}

impl EdgeControl for EdgeDevice {
    fn config(&self) -> EdgeConfig {
        let mut config = lock(&self.config).clone();
        config.reservations = lock(&self.outbound).reservations();
        config
    }

    fn configure(&self, config: EdgeConfig) {
        *lock(&self.outbound) = Outbound::new(&config);
        lock(&self.inbound).reconfigure(&config);
        *lock(&self.config) = config;
    }

    fn set_weights(&self, reservation: &str, weights: &[f64]) -> Result<(), FieldError> {
        lock(&self.outbound).set_weights(reservation, weights)
    }

    fn set_reseq(&self, params: ReseqParams) {
        lock(&self.inbound).set_params(params);
        lock(&self.config).reseq = params;
    }

    fn counters(&self) -> Value {
        self.stats()
    }
}

impl Device for EdgeDevice {
    fn receive(
        &self,
        now_ns: u64,
        port: Port,
        frame: Vec<u8>,
        out: &mut Vec<Emitted>,
    ) -> Result<(), DeviceError> {
        if let Err(error) = check_size(&frame) {
            self.oversize(port);
            return Err(error);
        }
        add(&self.counters_from(port).received, 1);
        match port {
            Port::A => {
                let mut tagged = Vec::new();
                if lock(&self.outbound).route(&frame, &mut tagged) {
                    out.push((Port::B, tagged));
                } else {
                    out.push((Port::B, frame));
                }
            }
            Port::B => {
                let mut to_host = Vec::new();
                lock(&self.inbound).receive(now_ns, frame, &mut to_host);
                out.extend(to_host.into_iter().map(|f| (Port::A, f)));
            }
        }
        Ok(())
    }

    fn oversize(&self, port: Port) {
        let counters = self.counters_from(port);
        add(&counters.received, 1);
        add(&counters.dropped_oversize, 1);
    }

    fn poll(&self, now_ns: u64, out: &mut Vec<Emitted>) {
        let mut to_host = Vec::new();
        lock(&self.inbound).poll(now_ns, &mut to_host);
        out.extend(to_host.into_iter().map(|f| (Port::A, f)));
    }

    fn next_deadline(&self) -> Option<u64> {
        lock(&self.inbound).reseq.next_hold_deadline()
    }

    fn sent(&self, port: Port, _frames: &[Vec<u8>], sent: usize, failed: usize) {
        // Frames leaving by B came from the host.
        let counters = self.counters_from(port.other());
        add(&counters.sent, sent);
        add(&counters.send_errors, failed);
    }

    fn control(&self, line: &str) -> Result<Value, DeviceError> {
        Ok(answer_edge(line, self)?)
    }

    fn stats(&self) -> Value {
        let mut to_net = lock(&self.outbound).counters_json();
        let mut to_host = lock(&self.inbound).counters_json();
        let merge = |into: &mut Value, side: Value| {
            if let (Some(into), Value::Object(side)) = (into.as_object_mut(), side) {
                into.extend(side);
            }
        };
        merge(&mut to_net, self.to_net.to_json());
        merge(&mut to_host, self.to_host.to_json());
        json!({"to_net": to_net, "to_host": to_host})
    }
}
