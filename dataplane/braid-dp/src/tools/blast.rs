//! A small-frame traffic generator for the benchmark: paced raw Ethernet frames.

use std::fs;
use std::io;
use std::thread;
use std::time::{Duration, Instant};

use crate::net::packet_socket::PacketSocket;

/// An IEEE local experimental EtherType: receivers count the frames and drop them.
const ETHERTYPE_EXPERIMENTAL: u16 = 0x88B5;
const BATCH: usize = 32;

#[derive(Debug, Clone, PartialEq)]
pub struct BlastOptions {
    pub interface: String,
    pub destination: [u8; 6],
    pub frame_len: usize,
    /// Frames per second; 0 sends as fast as the socket takes them.
    pub pps: u64,
    pub seconds: f64,
}

/// What a blast did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlastReport {
    pub sent: u64,
    pub failed: u64,
    pub seconds: f64,
}

/// A text that is not a MAC address (as given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacError(pub String);

impl std::fmt::Display for MacError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} is not a MAC address like 02:00:00:00:00:01",
            self.0
        )
    }
}

impl std::error::Error for MacError {}

pub fn parse_mac(text: &str) -> Result<[u8; 6], MacError> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    if parts.len() != 6 {
        return Err(MacError(text.to_string()));
    }
    let mut mac = [0u8; 6];
    for (byte, part) in mac.iter_mut().zip(parts) {
        *byte = u8::from_str_radix(part, 16).map_err(|_| MacError(text.to_string()))?;
    }
    Ok(mac)
}

/// An Ethernet frame of `len` bytes (at least the 14-byte header) carrying `sequence`.
pub fn build_frame(destination: [u8; 6], source: [u8; 6], len: usize, sequence: u64) -> Vec<u8> {
    let mut frame = vec![0u8; len.max(22)];
    frame[0..6].copy_from_slice(&destination);
    frame[6..12].copy_from_slice(&source);
    frame[12..14].copy_from_slice(&ETHERTYPE_EXPERIMENTAL.to_be_bytes());
    frame[14..22].copy_from_slice(&sequence.to_be_bytes());
    frame
}

/// When frame number `sent` is due, for a paced blast.
pub fn pace_offset(sent: u64, pps: u64) -> Duration {
    if pps == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos((sent as u128 * 1_000_000_000 / pps as u128) as u64)
}

fn interface_mac(interface: &str) -> io::Result<[u8; 6]> {
    let text = fs::read_to_string(format!("/sys/class/net/{interface}/address"))?;
    parse_mac(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

pub fn blast(options: &BlastOptions) -> io::Result<BlastReport> {
    let socket = PacketSocket::open(&options.interface)?;
    let source = interface_mac(&options.interface)?;
    let frames: Vec<Vec<u8>> = (0..BATCH as u64)
        .map(|i| build_frame(options.destination, source, options.frame_len, i))
        .collect();
    let views: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
    let start = Instant::now();
    let stop = Duration::from_secs_f64(options.seconds);
    let (mut sent, mut failed) = (0u64, 0u64);
    while start.elapsed() < stop {
        let due = pace_offset(sent + failed, options.pps);
        let elapsed = start.elapsed();
        if due > elapsed {
            thread::sleep(due - elapsed);
        }
        let (ok, bad) = socket.send_batch(&views);
        sent += ok as u64;
        failed += bad as u64;
    }
    Ok(BlastReport {
        sent,
        failed,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mac_addresses() {
        assert_eq!(parse_mac("02:00:0a:ff:00:01\n"), Ok([2, 0, 10, 255, 0, 1]));
        assert!(parse_mac("02:00:0a:ff:00").is_err());
        assert!(parse_mac("02:00:0a:ff:00:zz").is_err());
    }

    #[test]
    fn frames_have_the_length_addresses_and_sequence() {
        let frame = build_frame([1; 6], [2; 6], 64, 7);
        assert_eq!(frame.len(), 64);
        assert_eq!(&frame[0..6], &[1; 6]);
        assert_eq!(&frame[6..12], &[2; 6]);
        assert_eq!(&frame[12..14], &[0x88, 0xB5]);
        assert_eq!(frame[21], 7);
    }

    #[test]
    fn pacing_spreads_frames_evenly() {
        assert_eq!(pace_offset(0, 1000), Duration::ZERO);
        assert_eq!(pace_offset(300_000, 300_000), Duration::from_secs(1));
        assert_eq!(pace_offset(5, 0), Duration::ZERO);
    }
}
