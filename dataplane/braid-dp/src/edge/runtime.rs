//! The running multipath edge: a thread per direction between the host's
//! interface and the network's, applying `edge_logic` to every frame.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::field::FieldError;
use crate::edge::config::EdgeConfig;
use crate::edge::logic::{Inbound, Outbound};
use crate::edge::protocol::EdgeControl;
use crate::edge::reseq::ReseqParams;
use crate::net::packet_socket::{PacketSocket, RecvBatch};

const BATCH: usize = 64;
/// How often the network side wakes without frames, to end holds on time.
const POLL: Duration = Duration::from_millis(1);

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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // panic = "abort": a poisoned lock cannot be observed.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct Edge {
    host: PacketSocket,
    net: PacketSocket,
    config: Mutex<EdgeConfig>,
    outbound: Mutex<Outbound>,
    inbound: Mutex<Inbound>,
    to_net: SideCounters,
    to_host: SideCounters,
    epoch: Instant,
}

impl Edge {
    pub fn open(host: &str, net: &str, config: EdgeConfig) -> io::Result<Edge> {
        let host = PacketSocket::open(host)?;
        let net = PacketSocket::open(net)?;
        net.set_receive_timeout(POLL)?;
        Ok(Edge {
            host,
            net,
            outbound: Mutex::new(Outbound::new(&config)),
            inbound: Mutex::new(Inbound::new(&config)),
            config: Mutex::new(config),
            to_net: SideCounters::default(),
            to_host: SideCounters::default(),
            epoch: Instant::now(),
        })
    }

    /// Starts both directions; a receive error ends the process with a message.
    pub fn start(edge: &Arc<Edge>) {
        let host_side = Arc::clone(edge);
        thread::spawn(move || host_side.exit_on_error("host", Edge::host_to_net));
        let net_side = Arc::clone(edge);
        thread::spawn(move || net_side.exit_on_error("net", Edge::net_to_host));
    }

    fn exit_on_error(&self, side: &str, run: fn(&Edge) -> io::Result<()>) {
        if let Err(error) = run(self) {
            eprintln!("braid-dp: edge, receiving on the {side} interface: {error}");
            std::process::exit(1);
        }
    }

    /// Copies the frames worth handling out of the receive buffers.
    fn take(batch: &RecvBatch, counters: &SideCounters) -> Vec<Vec<u8>> {
        let mut frames = Vec::with_capacity(batch.received.len());
        for (i, received) in batch.received.iter().enumerate() {
            if received.packet_type == libc::PACKET_OUTGOING {
                continue;
            }
            add(&counters.received, 1);
            if received.truncated {
                add(&counters.dropped_oversize, 1);
                continue;
            }
            frames.push(batch.frame_to_vec(i));
        }
        frames
    }

    fn send(socket: &PacketSocket, frames: &[Vec<u8>], counters: &SideCounters) {
        if frames.is_empty() {
            return;
        }
        let slices: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
        let (sent, failed) = socket.send_batch(&slices);
        add(&counters.sent, sent);
        add(&counters.send_errors, failed);
    }

    fn host_to_net(&self) -> io::Result<()> {
        let mut batch = RecvBatch::new(BATCH);
        loop {
            match self.host.recv_batch(&mut batch) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let frames = Edge::take(&batch, &self.to_net);
            let mut out = Vec::with_capacity(frames.len());
            {
                let mut outbound = lock(&self.outbound);
                for frame in frames {
                    let mut tagged = Vec::new();
                    if outbound.route(&frame, &mut tagged) {
                        out.push(tagged);
                    } else {
                        out.push(frame);
                    }
                }
            }
            Edge::send(&self.net, &out, &self.to_net);
        }
    }

    fn net_to_host(&self) -> io::Result<()> {
        let mut batch = RecvBatch::new(BATCH);
        let mut out = Vec::with_capacity(BATCH);
        loop {
            let frames = match self.net.recv_batch(&mut batch) {
                Ok(_) => Edge::take(&batch, &self.to_host),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    Vec::new()
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            {
                let now = self.epoch.elapsed().as_nanos() as u64;
                let mut inbound = lock(&self.inbound);
                for frame in frames {
                    inbound.receive(now, frame, &mut out);
                }
                inbound.poll(now, &mut out);
            }
            Edge::send(&self.host, &out, &self.to_host);
            out.clear();
        }
    }
}

impl EdgeControl for Edge {
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
