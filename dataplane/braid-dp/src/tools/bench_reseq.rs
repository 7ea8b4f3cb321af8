//! `braid-dp bench-reseq`: the resequencer's packets per second on one core.
//!
//! Each packet's TCP header is read from a real frame (its sequence number
//! written in first), then the packet goes through the resequencer. The
//! baseline does the same reading and hands the packet on unchanged, so the
//! ratio is the resequencer's own cost. A second run feeds the packets as
//! two paths deliver them (bursts of 8, the second path 64 packets late).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use serde_json::{json, Value};

use crate::edge::reseq::{ReseqParams, Resequencer};
use crate::frame::{build_tcp, tcp_segment, FlowKey};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchOptions {
    pub packets: usize,
    pub flows: usize,
    pub rounds: usize,
}

const PAYLOAD: usize = 10; // 64-byte frames
const SEQ_AT: usize = 14 + 20 + 4;

fn templates(flows: usize) -> Vec<Vec<u8>> {
    (0..flows)
        .map(|f| {
            let key = FlowKey {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, (f >> 8) as u8, f as u8)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 1, 0, 1)),
                src_port: 40_000 + f as u16,
                dst_port: 5201,
            };
            build_tcp(&key, 0, 0x10, PAYLOAD)
        })
        .collect()
}

/// Packet `n` (in send order): flow n % flows, the (n / flows)-th segment of it.
fn stamp(frames: &mut [Vec<u8>], n: usize) -> usize {
    let flow = n % frames.len();
    let seq = ((n / frames.len()) * PAYLOAD) as u32;
    frames[flow][SEQ_AT..SEQ_AT + 4].copy_from_slice(&seq.to_be_bytes());
    flow
}

/// Arrival order over two paths: bursts of 8 alternate, the second path 64 packets late.
fn two_path_order(packets: usize) -> Vec<usize> {
    let mut arrivals: Vec<(usize, usize)> = (0..packets)
        .map(|n| (if (n / 8) % 2 == 1 { n + 64 } else { n }, n))
        .collect();
    arrivals.sort_unstable();
    arrivals.into_iter().map(|(_, n)| n).collect()
}

/// Seconds to pass `order` through (resequencing or not); checks the count out.
fn run(order: &[usize], flows: usize, resequence: bool) -> f64 {
    let mut frames = templates(flows);
    let params = ReseqParams {
        max_flows: flows.max(1),
        ..ReseqParams::default()
    };
    let mut reseq: Resequencer<FlowKey, usize> = Resequencer::new(params);
    let mut out = Vec::with_capacity(1024);
    let (mut total, mut bytes) = (0usize, 0usize);
    let start = Instant::now();
    for (i, &n) in order.iter().enumerate() {
        let flow = stamp(&mut frames, n);
        let (key, info) = match tcp_segment(&frames[flow]) {
            Some(segment) => segment,
            None => continue,
        };
        bytes += info.bytes;
        if resequence {
            reseq.push(i as u64, key, info, n, &mut out);
        } else {
            out.push(n);
        }
        if out.len() >= 512 {
            total += out.len();
            out.clear();
        }
    }
    reseq.flush(&mut out);
    total += out.len();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(
        total,
        order.len(),
        "bench: packets lost ({bytes} bytes seen)"
    );
    seconds
}

fn best_mpps(order: &[usize], options: &BenchOptions, resequence: bool) -> f64 {
    (0..options.rounds.max(1))
        .map(|_| order.len() as f64 / run(order, options.flows, resequence) / 1e6)
        .fold(0.0, f64::max)
}

pub fn bench(options: &BenchOptions) -> Value {
    let in_order: Vec<usize> = (0..options.packets).collect();
    let reordered = two_path_order(options.packets);
    let baseline = best_mpps(&in_order, options, false);
    let resequenced = best_mpps(&in_order, options, true);
    let two_paths = best_mpps(&reordered, options, true);
    json!({
        "packets": options.packets,
        "flows": options.flows,
        "frame_bytes": 14 + 20 + 20 + PAYLOAD,
        "baseline_mpps": baseline,
        "in_order_mpps": resequenced,
        "in_order_ratio": resequenced / baseline,
        "two_paths_mpps": two_paths,
        "floor_mpps": 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_passes_every_packet() {
        let options = BenchOptions {
            packets: 5_000,
            flows: 4,
            rounds: 1,
        };
        let report = bench(&options);
        assert!(report["in_order_mpps"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn two_paths_reorder_but_keep_every_packet() {
        let order = two_path_order(100);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(order, sorted);
    }
}
