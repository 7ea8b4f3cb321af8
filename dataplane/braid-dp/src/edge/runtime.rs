//! The running multipath edge: an [`EdgeDevice`] between the host's
//! interface and the network's, a thread per direction carrying frames
//! between their AF_PACKET sockets and the device (root needed).

use std::io;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::control::LineHandler;
use crate::device::{Device, DeviceHandler, Emitted, Port};
use crate::edge::config::EdgeConfig;
use crate::edge::device::EdgeDevice;
use crate::net::packet_socket::{PacketSocket, RecvBatch};

const BATCH: usize = 64;
/// How often the network side wakes without frames, to end holds on time.
const POLL: Duration = Duration::from_millis(1);

pub struct Edge {
    device: Arc<EdgeDevice>,
    host: PacketSocket,
    net: PacketSocket,
    epoch: Instant,
}

impl Edge {
    pub fn open(host: &str, net: &str, config: EdgeConfig) -> io::Result<Edge> {
        let host = PacketSocket::open(host)?;
        let net = PacketSocket::open(net)?;
        net.set_receive_timeout(POLL)?;
        Ok(Edge {
            device: Arc::new(EdgeDevice::new(config)),
            host,
            net,
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

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Hands the frames of a batch taken in on `port` to the device.
    fn take(&self, batch: &RecvBatch, port: Port, now_ns: u64, out: &mut Vec<Emitted>) {
        for (i, received) in batch.received.iter().enumerate() {
            if received.packet_type == libc::PACKET_OUTGOING {
                continue;
            }
            if received.truncated {
                self.device.oversize(port);
                continue;
            }
            // Read whole, the frame is short enough for the device: it cannot refuse it.
            let _ = self
                .device
                .receive(now_ns, port, batch.frame_to_vec(i), out);
        }
    }

    /// Sends what the device emitted (all by `port`'s socket) and says how it went.
    fn send(&self, port: Port, out: &mut Vec<Emitted>) {
        if out.is_empty() {
            return;
        }
        let socket = match port {
            Port::A => &self.host,
            Port::B => &self.net,
        };
        let frames: Vec<Vec<u8>> = out.drain(..).map(|(_, frame)| frame).collect();
        let slices: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
        let (sent, failed) = socket.send_batch(&slices);
        self.device.sent(port, &frames, sent, failed);
    }

    fn host_to_net(&self) -> io::Result<()> {
        let mut batch = RecvBatch::new(BATCH);
        let mut out = Vec::with_capacity(BATCH);
        loop {
            match self.host.recv_batch(&mut batch) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            self.take(&batch, Port::A, self.now_ns(), &mut out);
            self.send(Port::B, &mut out);
        }
    }

    fn net_to_host(&self) -> io::Result<()> {
        let mut batch = RecvBatch::new(BATCH);
        let mut out = Vec::with_capacity(BATCH);
        loop {
            let received = match self.net.recv_batch(&mut batch) {
                Ok(_) => true,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    false
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = self.now_ns();
            if received {
                self.take(&batch, Port::B, now, &mut out);
            }
            self.device.poll(now, &mut out);
            self.send(Port::A, &mut out);
        }
    }
}

impl LineHandler for Edge {
    fn handle(&self, line: &str) -> String {
        DeviceHandler(Arc::clone(&self.device)).handle(line)
    }
}
