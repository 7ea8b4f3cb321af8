//! `braid-dp probe`: UDP round trips timed by the kernel, for delay accuracy.
//!
//! The client stamps each datagram with its send time; the kernel stamps
//! its arrival at the echo server and back at the client (`SO_TIMESTAMPNS`,
//! taken when the packet is received, before any thread wakes). The server
//! writes into the reply how long it kept the datagram (kernel arrival to
//! its send), and the client subtracts it. What remains is the network's
//! round trip, without either process's wake-up latency.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::net::timestamped_udp::{enable_timestamps, realtime_ns, recv_timestamped, sleep_until};

/// sequence, client send time, server turnaround (ns), big-endian.
const PACKET: usize = 24;

#[derive(Debug, Clone, PartialEq)]
pub enum ProbeOptions {
    Echo {
        port: u16,
        seconds: f64,
    },
    Send {
        to: SocketAddr,
        count: usize,
        interval: Duration,
    },
}

fn field(packet: &[u8], index: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&packet[index * 8..index * 8 + 8]);
    u64::from_be_bytes(bytes)
}

/// Answers datagrams for `seconds`, writing its turnaround into each.
/// One probe packet into `buffer`, with its sender and arrival time; None when the
/// read timed out (the caller checks its deadline) or the datagram is not a probe.
fn receive_probe(socket: &UdpSocket, buffer: &mut [u8]) -> io::Result<Option<(SocketAddr, u64)>> {
    match recv_timestamped(socket, buffer) {
        Ok((len, peer, arrived_ns)) => Ok((len == PACKET).then_some((peer, arrived_ns))),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

pub fn echo(port: u16, seconds: f64) -> io::Result<()> {
    let socket = UdpSocket::bind(("0.0.0.0", port))?;
    enable_timestamps(&socket)?;
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut buffer = [0u8; 2048];
    while Instant::now() < deadline {
        let (peer, arrived_ns) = match receive_probe(&socket, &mut buffer)? {
            Some(got) => got,
            None => continue,
        };
        let turnaround = realtime_ns().saturating_sub(arrived_ns);
        buffer[16..24].copy_from_slice(&turnaround.to_be_bytes());
        socket.send_to(&buffer[..PACKET], peer)?;
    }
    Ok(())
}

/// Round trips in milliseconds, in send order; None for probes that never came back.
pub fn send(to: SocketAddr, count: usize, interval: Duration) -> io::Result<Vec<Option<f64>>> {
    let socket = Arc::new(UdpSocket::bind(("0.0.0.0", 0))?);
    enable_timestamps(&socket)?;
    socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    let done = Arc::new(AtomicBool::new(false));
    let receiver = {
        let (socket, done) = (Arc::clone(&socket), Arc::clone(&done));
        thread::spawn(move || receive_all(&socket, count, &done))
    };
    let start = Instant::now();
    let mut packet = [0u8; PACKET];
    for n in 0..count {
        sleep_until(start + interval * n as u32);
        packet[..8].copy_from_slice(&(n as u64).to_be_bytes());
        packet[8..16].copy_from_slice(&realtime_ns().to_be_bytes());
        socket.send_to(&packet, to)?;
    }
    // Stragglers: up to two seconds after the last probe.
    thread::sleep(Duration::from_secs(2).min(interval * 10 + Duration::from_millis(500)));
    done.store(true, Ordering::Release);
    receiver
        .join()
        .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::Other, "receiver failed")))
}

fn receive_all(
    socket: &UdpSocket,
    count: usize,
    done: &AtomicBool,
) -> io::Result<Vec<Option<f64>>> {
    let mut rtts = vec![None; count];
    let mut answered = 0;
    let mut buffer = [0u8; 2048];
    while answered < count && !done.load(Ordering::Acquire) {
        let arrived_ns = match receive_probe(socket, &mut buffer)? {
            Some((_, arrived_ns)) => arrived_ns,
            None => continue,
        };
        let (sequence, sent_ns, turnaround) =
            (field(&buffer, 0), field(&buffer, 1), field(&buffer, 2));
        let slot = match rtts.get_mut(sequence as usize) {
            Some(slot) => slot,
            None => continue,
        };
        if slot.is_none() {
            let rtt = arrived_ns
                .saturating_sub(sent_ns)
                .saturating_sub(turnaround);
            *slot = Some(rtt as f64 / 1e6);
            answered += 1;
        }
    }
    Ok(rtts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_over_loopback_are_short_and_complete() {
        let port = 40_000 + (std::process::id() % 20_000) as u16;
        let server = thread::spawn(move || echo(port, 1.5));
        thread::sleep(Duration::from_millis(100));
        let to: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let rtts = send(to, 20, Duration::from_millis(2)).unwrap();
        assert!(
            rtts.iter()
                .all(|r| r.map_or(false, |ms| (0.0..50.0).contains(&ms))),
            "{rtts:?}"
        );
        server.join().unwrap().unwrap();
    }
}
