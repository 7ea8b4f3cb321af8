//! Algorithm 1 case by case, then properties over random streams (seeded,
//! so a failure names the seed that reproduces it).

use super::*;
use crate::common::rng::SplitMix64;

const MS: u64 = 1_000_000;

fn params() -> ReseqParams {
    ReseqParams {
        buffer_size: 8,
        threshold: 4,
        lrf: 20,
        hold_ns: 50 * MS,
        idle_ns: 1_000 * MS,
        ..ReseqParams::default()
    }
}

fn seg(seq: u32, len: u32) -> SegmentInfo {
    SegmentInfo {
        seq,
        len,
        syn: false,
        bytes: 100,
    }
}

fn syn(seq: u32) -> SegmentInfo {
    SegmentInfo {
        seq,
        len: 1,
        syn: true,
        bytes: 60,
    }
}

/// Pushes (seq, len) segments of flow 1 at time 0; returns what came out, by seq.
fn run(r: &mut Resequencer<u8, u32>, segments: &[(u32, u32)]) -> Vec<u32> {
    let mut out = Vec::new();
    for &(seq, len) in segments {
        r.push(0, 1, seg(seq, len), seq, &mut out);
    }
    out
}

#[test]
fn syn_sets_expected_and_in_order_segments_pass_at_once() {
    let mut r = Resequencer::new(params());
    let mut out = Vec::new();
    r.push(0, 1, syn(999), 999, &mut out);
    assert_eq!(out, [999]);
    assert_eq!(run(&mut r, &[(1000, 100), (1100, 100)]), [1000, 1100]);
    assert_eq!(r.stats.in_order, 3);
    assert_eq!(r.held_packets(), 0);
}

#[test]
fn a_gap_holds_later_segments_until_it_fills_then_releases_them_in_order() {
    let mut r = Resequencer::new(params());
    run(&mut r, &[(0, 100)]);
    assert_eq!(run(&mut r, &[(300, 100), (200, 100)]), Vec::<u32>::new());
    assert_eq!(r.held_packets(), 2);
    assert_eq!(r.held_bytes(), 200);
    assert_eq!(run(&mut r, &[(100, 100)]), [100, 200, 300]);
    assert_eq!(r.stats.resequenced, 2);
    assert_eq!((r.held_packets(), r.held_bytes()), (0, 0));
    assert_eq!(run(&mut r, &[(400, 100)]), [400]);
}

#[test]
fn duplicates_and_old_segments_are_forwarded_at_once() {
    let mut r = Resequencer::new(params());
    run(&mut r, &[(0, 100), (100, 100), (300, 100)]);
    assert_eq!(run(&mut r, &[(0, 100), (50, 10)]), [0, 50]);
    assert_eq!(r.stats.old, 2);
    assert_eq!(r.held_packets(), 1);
}

#[test]
fn beyond_the_threshold_everything_goes_in_order_and_lrf_moves_expected() {
    let mut r = Resequencer::new(params());
    run(&mut r, &[(0, 100)]);
    // Segment 100 is lost: T = 4, so the sixth held segment triggers a release.
    let held: Vec<(u32, u32)> = (0..5).map(|i| (600 - 100 * i, 100)).collect();
    assert!(run(&mut r, &held).is_empty());
    assert_eq!(run(&mut r, &[(700, 100)]), [200, 300, 400, 500, 600, 700]);
    assert_eq!(r.stats.released_threshold, 6);
    // expected = 700 + 100 * 20 = 2700: the rest of a loss burst passes at once.
    assert_eq!(
        run(&mut r, &[(900, 100), (800, 100), (2600, 100)]),
        [900, 800, 2600]
    );
    assert_eq!(run(&mut r, &[(2800, 100)]), Vec::<u32>::new());
    assert_eq!(run(&mut r, &[(2700, 100)]), [2700, 2800]);
}

#[test]
fn a_full_buffer_sends_its_lowest_segment_or_the_new_one() {
    let p = ReseqParams {
        buffer_size: 3,
        threshold: 10,
        ..params()
    };
    let mut r = Resequencer::new(p);
    run(&mut r, &[(0, 100)]);
    assert!(run(&mut r, &[(300, 100), (400, 100), (500, 100)]).is_empty());
    // Above the lowest held (300): 300 leaves, 600 is held.
    assert_eq!(run(&mut r, &[(600, 100)]), [300]);
    // Below the lowest held (now 400): the new one leaves.
    assert_eq!(run(&mut r, &[(200, 100)]), [200]);
    assert_eq!(r.stats.released_full, 2);
    assert_eq!(r.held_packets(), 3);
}

#[test]
fn a_gap_older_than_the_hold_time_is_given_up() {
    let mut r = Resequencer::new(params());
    let mut out = Vec::new();
    r.push(0, 1, seg(0, 100), 0, &mut out);
    r.push(MS, 1, seg(200, 100), 200, &mut out);
    r.push(2 * MS, 1, seg(400, 100), 400, &mut out);
    r.poll(50 * MS, &mut out);
    assert_eq!(out, [0]);
    // 200 has waited 50 ms: its gap goes; 400 has only waited 49 ms.
    r.poll(51 * MS, &mut out);
    assert_eq!(out, [0, 200]);
    r.poll(52 * MS, &mut out);
    assert_eq!(out, [0, 200, 400]);
    assert_eq!(r.stats.released_hold, 2);
    // The lost segments, if they come late, pass at once.
    r.push(53 * MS, 1, seg(100, 100), 100, &mut out);
    assert_eq!(out.last(), Some(&100));
}

#[test]
fn sequence_numbers_wrap() {
    let mut r = Resequencer::new(params());
    let start = u32::MAX - 150;
    run(&mut r, &[(start, 100)]);
    let after = start.wrapping_add(200);
    assert!(run(&mut r, &[(after, 100)]).is_empty());
    assert_eq!(
        run(&mut r, &[(start.wrapping_add(100), 100)]),
        [start.wrapping_add(100), after]
    );
    assert_eq!(run(&mut r, &[(start, 100)]), [start]); // an old one, across the wrap
    assert!(seq_before(u32::MAX, 0) && !seq_before(0, u32::MAX));
}

#[test]
fn flows_are_resequenced_apart() {
    let mut r = Resequencer::new(params());
    let mut out = Vec::new();
    r.push(0, 1, seg(0, 100), 10, &mut out);
    r.push(0, 2, seg(5000, 100), 20, &mut out);
    r.push(0, 1, seg(200, 100), 12, &mut out);
    r.push(0, 2, seg(5100, 100), 21, &mut out);
    r.push(0, 1, seg(100, 100), 11, &mut out);
    assert_eq!(out, [10, 20, 21, 11, 12]);
    assert_eq!(r.flows(), 2);
}

#[test]
fn beyond_the_flow_cap_new_flows_pass_untracked_until_idle_ones_expire() {
    let p = ReseqParams {
        max_flows: 2,
        ..params()
    };
    let mut r: Resequencer<u8, u32> = Resequencer::new(p);
    let mut out = Vec::new();
    r.push(0, 1, seg(0, 100), 1, &mut out);
    r.push(0, 2, seg(0, 100), 2, &mut out);
    r.push(0, 3, seg(0, 100), 3, &mut out);
    r.push(0, 3, seg(200, 100), 4, &mut out);
    assert_eq!(out, [1, 2, 3, 4]);
    assert_eq!((r.stats.untracked, r.flows()), (2, 2));
    // A second later flows 1 and 2 are idle and make room.
    r.push(1_000 * MS, 3, seg(0, 100), 5, &mut out);
    assert_eq!((r.flows(), r.stats.flows_expired), (1, 2));
}

#[test]
fn at_the_packet_cap_the_arriving_flow_is_released_in_order() {
    let p = ReseqParams {
        max_packets: 3,
        threshold: 100,
        buffer_size: 100,
        ..params()
    };
    let mut r = Resequencer::new(p);
    run(&mut r, &[(0, 100)]);
    assert!(run(&mut r, &[(400, 100), (200, 100), (300, 100)]).is_empty());
    assert_eq!(run(&mut r, &[(600, 100)]), [200, 300, 400, 600]);
    assert_eq!((r.stats.released_cap, r.held_packets()), (4, 0));
    // expected is now 700: 500 is old.
    assert_eq!(run(&mut r, &[(500, 100)]), [500]);
}

#[test]
fn a_new_syn_releases_what_the_old_connection_held() {
    let mut r = Resequencer::new(params());
    run(&mut r, &[(0, 100), (300, 100)]);
    let mut out = Vec::new();
    r.push(0, 1, syn(7000), 7000, &mut out);
    assert_eq!(out, [300, 7000]);
    assert_eq!(run(&mut r, &[(7001, 10)]), [7001]);
}

// ---- properties over random streams ----

/// A segment as sent (ids grow in send order).
struct Sent {
    flow: u8,
    id: u32,
}

struct Arrival {
    at_ns: u64,
    flow: u8,
    info: SegmentInfo,
    id: u32,
}

struct Scenario {
    loss: f64,
    duplicate: f64,
    /// Extra delay of the slow path.
    spread_ns: u64,
    flows: u8,
    segments: u32,
}

/// Sends each flow's segments 10 µs apart in bursts of 4 over two paths,
/// the second `spread_ns` slower, with losses and duplicates.
fn arrivals(rng: &mut SplitMix64, s: &Scenario) -> (Vec<Sent>, Vec<Arrival>) {
    let (mut sent, mut arrived) = (Vec::new(), Vec::new());
    let mut id = 0;
    for flow in 0..s.flows {
        // Start anywhere, often just before the wrap.
        let mut seq = if rng.chance(0.5) {
            u32::MAX - (rng.next_u64() % 100_000) as u32
        } else {
            rng.next_u64() as u32
        };
        for n in 0..s.segments {
            let len = 1 + (rng.next_u64() % 1460) as u32;
            let send_ns = u64::from(n) * 10_000 + u64::from(flow) * 3_000;
            let path_delay = if (n / 4) % 2 == 1 { s.spread_ns } else { 0 };
            let jitter = rng.next_u64() % 5_000;
            let info = SegmentInfo {
                seq,
                len,
                syn: false,
                bytes: len as usize + 54,
            };
            sent.push(Sent { flow, id });
            let copies = if rng.chance(s.loss) {
                0
            } else if rng.chance(s.duplicate) {
                2
            } else {
                1
            };
            for copy in 0..copies {
                let at_ns = send_ns + path_delay + jitter + copy * (rng.next_u64() % 2_000_000);
                arrived.push(Arrival {
                    at_ns,
                    flow,
                    info,
                    id,
                });
            }
            id += 1;
            seq = seq.wrapping_add(len);
        }
    }
    arrived.sort_by_key(|a| a.at_ns);
    (sent, arrived)
}

/// (id, arrival time) in output order. After every step checks the memory
/// caps and that nothing waited longer than the hold time (plus the poll period).
fn feed(r: &mut Resequencer<u8, (u32, u64)>, arrived: &[Arrival], poll_ns: u64) -> Vec<(u32, u64)> {
    let p = r.params();
    let mut out = Vec::new();
    let mut next_poll = 0;
    let check = |out: &[(u32, u64)], now: u64, from: usize| {
        for (id, at) in &out[from..] {
            assert!(
                now - at <= p.hold_ns + poll_ns,
                "id {id} waited {} ns",
                now - at
            );
        }
    };
    for a in arrived {
        while next_poll <= a.at_ns {
            let from = out.len();
            r.poll(next_poll, &mut out);
            check(&out, next_poll, from);
            next_poll += poll_ns;
        }
        let from = out.len();
        r.push(a.at_ns, a.flow, a.info, (a.id, a.at_ns), &mut out);
        check(&out, a.at_ns, from);
        assert!(
            r.held_packets() <= p.max_packets,
            "held {}",
            r.held_packets()
        );
        assert!(r.held_bytes() <= p.max_bytes, "bytes {}", r.held_bytes());
        assert!(r.flows() <= p.max_flows);
    }
    let end = arrived.last().map_or(0, |a| a.at_ns) + p.hold_ns + 2 * poll_ns;
    while next_poll <= end {
        let from = out.len();
        r.poll(next_poll, &mut out);
        check(&out, next_poll, from);
        next_poll += poll_ns;
    }
    assert_eq!(r.held_packets(), 0);
    out
}

fn check_exactly_once(arrived: &[Arrival], out: &[(u32, u64)], seed: u64) {
    let mut expected: Vec<u32> = arrived.iter().map(|a| a.id).collect();
    let mut got: Vec<u32> = out.iter().map(|o| o.0).collect();
    expected.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, expected, "seed {seed}: not every packet exactly once");
}

#[test]
fn property_every_packet_once_in_order_and_never_held_past_the_hold_time() {
    let mut totals = ReseqStats::default();
    for seed in 0..200u64 {
        let mut rng = SplitMix64::new(seed);
        let scenario = Scenario {
            loss: [0.0, 0.01, 0.05][(seed % 3) as usize],
            duplicate: [0.0, 0.02][(seed / 3 % 2) as usize],
            spread_ns: 100_000 + rng.next_u64() % 3_000_000,
            flows: 1 + (seed % 4) as u8,
            segments: 300,
        };
        let (sent, arrived) = arrivals(&mut rng, &scenario);
        // Threshold and buffer out of the way: only the hold time gives up a gap,
        // and it is longer than any path's extra delay.
        let p = ReseqParams {
            buffer_size: 100_000,
            threshold: 100_000,
            hold_ns: 10 * MS,
            ..ReseqParams::default()
        };
        let mut r = Resequencer::new(p);
        let out = feed(&mut r, &arrived, 100_000);
        check_exactly_once(&arrived, &out, seed);
        // In order: per flow, the first copy of each segment leaves in send order.
        for flow in 0..scenario.flows {
            let order: Vec<u32> = sent
                .iter()
                .filter(|s| s.flow == flow)
                .map(|s| s.id)
                .collect();
            let mut seen = std::collections::HashSet::new();
            let firsts: Vec<u32> = out
                .iter()
                .map(|o| o.0)
                .filter(|id| order.contains(id) && seen.insert(*id))
                .collect();
            let mut sorted = firsts.clone();
            sorted.sort_unstable();
            assert_eq!(firsts, sorted, "seed {seed} flow {flow}: out of order");
        }
        totals.resequenced += r.stats.resequenced;
        totals.released_hold += r.stats.released_hold;
        totals.old += r.stats.old;
    }
    // The streams did need resequencing, gaps were given up, duplicates came.
    assert!(totals.resequenced > 10_000, "{totals:?}");
    assert!(totals.released_hold > 100 && totals.old > 100, "{totals:?}");
}

#[test]
fn property_hold_time_bounds_the_wait_of_every_packet() {
    for seed in 0..100u64 {
        let mut rng = SplitMix64::new(1000 + seed);
        let scenario = Scenario {
            loss: 0.05,
            duplicate: 0.02,
            spread_ns: rng.next_u64() % 5_000_000,
            flows: 3,
            segments: 200,
        };
        let (_, arrived) = arrivals(&mut rng, &scenario);
        let p = ReseqParams {
            buffer_size: 64,
            threshold: 32,
            hold_ns: 2 * MS,
            ..ReseqParams::default()
        };
        let mut r = Resequencer::new(p);
        let out = feed(&mut r, &arrived, 200_000);
        check_exactly_once(&arrived, &out, seed);
    }
}

#[test]
fn property_memory_stays_under_tiny_caps_whatever_the_input() {
    for seed in 0..200u64 {
        let mut rng = SplitMix64::new(5000 + seed);
        let scenario = Scenario {
            loss: 0.1,
            duplicate: 0.1,
            spread_ns: rng.next_u64() % 10_000_000,
            flows: 6,
            segments: 150,
        };
        let (_, arrived) = arrivals(&mut rng, &scenario);
        let p = ReseqParams {
            buffer_size: 1 + (rng.next_u64() % 20) as usize,
            threshold: (rng.next_u64() % 30) as usize,
            hold_ns: 1 + rng.next_u64() % (20 * MS),
            idle_ns: 1 + rng.next_u64() % (5 * MS),
            max_flows: 1 + (rng.next_u64() % 4) as usize,
            max_packets: 1 + (rng.next_u64() % 16) as usize,
            max_bytes: 1500 + (rng.next_u64() % 20_000) as usize,
            lrf: (rng.next_u64() % 30) as u32,
        };
        let mut r = Resequencer::new(p);
        let out = feed(&mut r, &arrived, 1 + rng.next_u64() % 1_000_000);
        check_exactly_once(&arrived, &out, seed);
    }
}

#[test]
fn property_random_sequence_numbers_never_break_the_caps() {
    // Not TCP-like at all: any seq, any length, SYNs at random.
    let mut rng = SplitMix64::new(77);
    let p = ReseqParams {
        max_packets: 50,
        max_bytes: 20_000,
        max_flows: 8,
        idle_ns: 5 * MS,
        hold_ns: 3 * MS,
        ..ReseqParams::default()
    };
    let mut r: Resequencer<u8, u32> = Resequencer::new(p);
    let (mut out, mut pushed) = (Vec::new(), 0u32);
    for n in 0..100_000u32 {
        let info = SegmentInfo {
            seq: rng.next_u64() as u32 % 4096 * 1000,
            len: (rng.next_u64() % 2000) as u32,
            syn: rng.chance(0.001),
            bytes: (rng.next_u64() % 1600) as usize,
        };
        r.push(
            u64::from(n) * 1_000,
            (rng.next_u64() % 16) as u8,
            info,
            n,
            &mut out,
        );
        pushed += 1;
        assert!(r.held_packets() <= 50 && r.held_bytes() <= 20_000 && r.flows() <= 8);
    }
    r.flush(&mut out);
    assert_eq!(out.len() as u32, pushed);
}
