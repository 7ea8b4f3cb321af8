//! Devices wired together on simulated time, faults injected, no root:
//! host a ─ edge A ═ two links on one wire (VLAN 101 at 1 ms, VLAN 102 at
//! 8 ms, the second behind faults) ═ edge B ─ host b.

use std::collections::{HashSet, VecDeque};

use serde_json::json;

use super::fault::{FaultCounts, Faults, Faulty};
use super::*;
use crate::common::field::{FieldError, Problem};
use crate::edge::config::EdgeConfig;
use crate::edge::device::EdgeDevice;
use crate::edge::wrr::WrrError;
use crate::frame::{build_tcp, tcp_segment, vlan_id, FlowKey, MAX_FRAME};
use crate::link::config::DirectionConfig;
use crate::link::device::LinkDevice;
use crate::link::protocol::{LinkControl, Side};

const MS: u64 = 1_000_000;
/// The simulation's tick.
const STEP: u64 = 100_000;

/// Stages in a row; each stage's devices sit side by side (every frame
/// entering the stage goes to each). A flipped stage takes frames in on B
/// and passes them on from A (the far edge).
type Stage<'a> = (Vec<&'a dyn Device>, bool);

struct Outcome {
    /// What left the last stage, and when.
    delivered: Vec<(u64, Vec<u8>)>,
    errors: Vec<DeviceError>,
}

fn ports(flipped: bool) -> (Port, Port) {
    if flipped {
        (Port::B, Port::A)
    } else {
        (Port::A, Port::B)
    }
}

/// Passes on what `device` of stage `at` emitted (and tells it it was sent).
fn pass_on(
    stages: &[Stage<'_>],
    at: usize,
    device: &dyn Device,
    emitted: Vec<Emitted>,
    now: u64,
    pending: &mut VecDeque<(usize, Vec<u8>)>,
    outcome: &mut Outcome,
) {
    let (_, exit) = ports(stages[at].1);
    for (port, frame) in emitted {
        device.sent(port, std::slice::from_ref(&frame), 1, 0);
        if port != exit {
            continue; // upstream (nothing sends that way here)
        }
        if at + 1 < stages.len() {
            pending.push_back((at + 1, frame));
        } else {
            outcome.delivered.push((now, frame));
        }
    }
}

/// Runs the stages from 0 to `until` ns, injecting `schedule` (time, frame) into the first.
fn run(stages: &[Stage<'_>], schedule: &[(u64, Vec<u8>)], until: u64) -> Outcome {
    let mut outcome = Outcome {
        delivered: Vec::new(),
        errors: Vec::new(),
    };
    let mut next = 0;
    let mut now = 0;
    while now <= until {
        let mut pending = VecDeque::new();
        while next < schedule.len() && schedule[next].0 <= now {
            pending.push_back((0, schedule[next].1.clone()));
            next += 1;
        }
        for (at, (devices, _)) in stages.iter().enumerate() {
            for device in devices {
                let mut emitted = Vec::new();
                device.poll(now, &mut emitted);
                pass_on(
                    stages,
                    at,
                    *device,
                    emitted,
                    now,
                    &mut pending,
                    &mut outcome,
                );
            }
        }
        while let Some((at, frame)) = pending.pop_front() {
            let (entry, _) = ports(stages[at].1);
            for device in &stages[at].0 {
                let mut emitted = Vec::new();
                if let Err(error) = device.receive(now, entry, frame.clone(), &mut emitted) {
                    outcome.errors.push(error);
                }
                pass_on(
                    stages,
                    at,
                    *device,
                    emitted,
                    now,
                    &mut pending,
                    &mut outcome,
                );
            }
        }
        now += STEP;
    }
    outcome
}

fn key() -> FlowKey {
    FlowKey {
        src: "10.0.0.1".parse().unwrap(),
        dst: "10.0.0.2".parse().unwrap(),
        src_port: 40000,
        dst_port: 5201,
    }
}

fn edge(hold_ms: u64) -> EdgeDevice {
    let config = EdgeConfig::from_json(&json!({
        "reservations": [{"id": "r1", "src": "10.0.0.1", "dst": "10.0.0.2", "burst": 2,
                          "paths": [{"vlan": 101, "weight": 1}, {"vlan": 102, "weight": 1}]}],
        "reseq": {"threshold": 4096, "buffer_size": 8192, "hold_ms": hold_ms}
    }))
    .unwrap();
    EdgeDevice::new(config)
}

fn link(delay_ms: u64, vlan: u16) -> LinkDevice {
    let config = DirectionConfig {
        delay_ns: delay_ms * MS,
        ..DirectionConfig::default()
    };
    LinkDevice::new(&config, 1, Some(vlan))
}

const FIRST: u32 = 1000;
const PAYLOAD: u32 = 100;

/// A SYN, then `n` segments of one flow, one every 200 µs: (send time, seq, frame).
fn flow(n: u32) -> Vec<(u64, u32, Vec<u8>)> {
    let mut segments = vec![(0, FIRST - 1, build_tcp(&key(), FIRST - 1, 0x02, 0))];
    for i in 0..n {
        let seq = FIRST + i * PAYLOAD;
        let frame = build_tcp(&key(), seq, 0x10, PAYLOAD as usize);
        segments.push((u64::from(i + 1) * 2 * STEP, seq, frame));
    }
    segments
}

/// Runs the flow through edge A, the two links (the slow one behind `faults`)
/// and edge B; returns what host b got, the faults' counts and edge B.
fn through_two_paths(n: u32, faults: Faults, hold_ms: u64) -> (Outcome, FaultCounts, EdgeDevice) {
    let (edge_a, edge_b) = (edge(hold_ms), edge(hold_ms));
    let fast = link(1, 101);
    let slow = Faulty::new(link(8, 102), faults);
    let segments = flow(n);
    let schedule: Vec<(u64, Vec<u8>)> = segments.iter().map(|(t, _, f)| (*t, f.clone())).collect();
    let until = segments.last().map_or(0, |s| s.0) + 4 * hold_ms * MS;
    let stages: Vec<Stage<'_>> = vec![
        (vec![&edge_a], false),
        (vec![&fast, &slow], false),
        (vec![&edge_b], true),
    ];
    let outcome = run(&stages, &schedule, until);
    let counts = slow.counts();
    drop(stages);
    (outcome, counts, edge_b)
}

/// The sequence numbers host b got, first copies only, checking each frame
/// came out untagged and whole.
fn first_copies(outcome: &Outcome) -> Vec<u32> {
    let mut seen = HashSet::new();
    let mut seqs = Vec::new();
    for (_, frame) in &outcome.delivered {
        assert_eq!(vlan_id(frame), None, "a frame kept its tag");
        let (flow, info) = tcp_segment(frame).expect("not the TCP segment sent");
        assert_eq!(flow, key());
        if seen.insert(info.seq) {
            seqs.push(info.seq);
        }
    }
    seqs
}

fn strictly_increasing(seqs: &[u32]) -> bool {
    seqs.windows(2).all(|w| w[0] < w[1])
}

#[test]
fn an_edge_behind_a_reordering_duplicating_path_still_delivers_in_order() {
    let faults = Faults {
        seed: 7,
        delay_ns: 3 * MS,
        duplicate: 0.05,
        ..Faults::default()
    };
    let n = 1000;
    let (outcome, counts, edge_b) = through_two_paths(n, faults, 200);
    assert!(outcome.errors.is_empty());
    let seqs = first_copies(&outcome);
    assert_eq!(seqs.len(), n as usize + 1, "every segment arrives");
    assert!(strictly_increasing(&seqs), "out of order: {seqs:?}");
    assert!(counts.duplicated > 0 && counts.delayed > 0);
    assert_eq!(
        outcome.delivered.len() as u64,
        u64::from(n) + 1 + counts.duplicated
    );
    let stats = edge_b.stats();
    assert!(stats["to_host"]["resequenced"].as_u64().unwrap() > 100);
    assert_eq!(stats["to_host"]["buffered_packets"], 0);
    assert_eq!(stats["to_host"]["released_hold"], 0);
    assert_eq!(
        stats["to_host"]["sent"].as_u64(),
        Some(outcome.delivered.len() as u64)
    );
}

#[test]
fn losses_and_a_cut_on_one_path_cost_at_most_the_hold_time() {
    let faults = Faults {
        seed: 11,
        drop: 0.02,
        delay_ns: MS,
        cuts: vec![(60 * MS, 80 * MS)],
        ..Faults::default()
    };
    let (n, hold_ms) = (1000, 50);
    let (outcome, counts, edge_b) = through_two_paths(n, faults, hold_ms);
    assert!(outcome.errors.is_empty());
    let seqs = first_copies(&outcome);
    assert!(strictly_increasing(&seqs), "out of order: {seqs:?}");
    // Whatever the faults did not lose arrives, once.
    assert_eq!(outcome.delivered.len(), seqs.len());
    let lost = n as usize + 1 - seqs.len();
    assert!(counts.dropped > 0 && counts.cut > 0);
    assert_eq!(lost as u64, counts.dropped + counts.cut);
    // Nothing waits longer than the slow path, its jitter and the hold time.
    let sent: std::collections::HashMap<u32, u64> =
        flow(n).into_iter().map(|(t, seq, _)| (seq, t)).collect();
    for (at, frame) in &outcome.delivered {
        let seq = tcp_segment(frame).unwrap().1.seq;
        let waited = at - sent[&seq];
        assert!(
            waited <= (8 + 1 + hold_ms) * MS + 2 * STEP,
            "{seq} waited {waited}"
        );
    }
    let stats = edge_b.stats();
    assert!(stats["to_host"]["released_hold"].as_u64().unwrap() > 0);
    assert_eq!(stats["to_host"]["released_threshold"], 0);
    assert_eq!(stats["to_host"]["buffered_packets"], 0);
}

#[test]
fn injected_and_real_errors_surface_typed_and_change_nothing() {
    let faults = Faults {
        fail_receive: vec![1],
        fail_control: vec![0],
        ..Faults::default()
    };
    let device = Faulty::new(
        LinkDevice::new(&DirectionConfig::default(), 1, None),
        faults,
    );
    let frame = build_tcp(&key(), 1, 0x10, 10);
    let mut out = Vec::new();
    device.receive(0, Port::A, frame.clone(), &mut out).unwrap();
    assert_eq!(out, vec![(Port::B, frame.clone())]);
    match device.receive(0, Port::A, frame.clone(), &mut out) {
        Err(DeviceError::Injected {
            call: Call::Receive,
            index: 1,
        }) => {}
        other => panic!("not the injected receive error: {other:?}"),
    }
    assert_eq!(device.inner().counters(Side::AToB).received, 1);
    assert!(matches!(
        device.control(r#"{"cmd":"get"}"#),
        Err(DeviceError::Injected {
            call: Call::Control,
            index: 0
        })
    ));
    let refused = device
        .control(r#"{"cmd":"set","delay_ms":5,"loss_percent":250}"#)
        .unwrap_err();
    match &refused {
        DeviceError::Refused(crate::control::RequestError::Field(FieldError {
            field,
            problem: Problem::Outside { value, .. },
        })) => assert_eq!((field.as_str(), *value), ("loss_percent", 250.0)),
        other => panic!("not a refused field: {other:?}"),
    }
    assert_eq!(refused.to_string(), "loss_percent: 250 is outside 0 to 100");
    assert_eq!(device.inner().config(Side::AToB).delay_ns, 0);
    let huge = vec![0u8; MAX_FRAME + 5];
    match device.receive(0, Port::B, huge, &mut out) {
        Err(DeviceError::Oversize { len, max }) => {
            assert_eq!((len, max), (MAX_FRAME + 5, MAX_FRAME + 4))
        }
        other => panic!("not oversize: {other:?}"),
    }
    let stats = device.stats();
    assert_eq!(stats["b_to_a"]["dropped_oversize"], 1);
    assert_eq!(stats["faults"]["failed_calls"], 2);
    // Through the control socket's handler, a refusal reads as before.
    let handler = DeviceHandler(std::sync::Arc::new(LinkDevice::new(
        &DirectionConfig::default(),
        1,
        None,
    )));
    let reply: Value = serde_json::from_str(&crate::control::LineHandler::handle(
        &handler,
        r#"{"cmd":"set","delay":10}"#,
    ))
    .unwrap();
    assert_eq!(reply["ok"], false);
    assert!(reply["error"]
        .as_str()
        .unwrap()
        .starts_with("delay: unknown field"));
}

#[test]
fn a_link_device_delays_filters_its_vlan_and_loses_what_a_cut_catches() {
    let device = link(5, 101);
    let mut tagged = Vec::new();
    crate::frame::push_vlan(&build_tcp(&key(), 1, 0x10, 10), 101, &mut tagged);
    let mut out = Vec::new();
    device
        .receive(MS, Port::A, tagged.clone(), &mut out)
        .unwrap();
    assert!(out.is_empty());
    assert_eq!(device.next_deadline(), Some(6 * MS));
    device.poll(6 * MS - 1, &mut out);
    assert!(out.is_empty());
    device.poll(6 * MS, &mut out);
    assert_eq!(out, vec![(Port::B, tagged.clone())]);
    // Other VLANs, and untagged frames, are another link's.
    device
        .receive(7 * MS, Port::B, build_tcp(&key(), 1, 0x10, 10), &mut out)
        .unwrap();
    assert_eq!(device.counters(Side::BToA).received, 0);
    // A cut loses what is queued too.
    device
        .receive(7 * MS, Port::B, tagged.clone(), &mut out)
        .unwrap();
    device
        .control(r#"{"cmd":"cut","direction":"b_to_a"}"#)
        .unwrap();
    device.poll(20 * MS, &mut out);
    assert_eq!(out.len(), 1);
    let stats = device.stats();
    assert_eq!(stats["b_to_a"]["dropped_cut"], 1);
    assert_eq!(stats["a_to_b"]["received"], 1);
    assert_eq!(device.next_deadline(), None);
}

#[test]
fn faults_are_the_same_for_the_same_seed() {
    let outputs = |seed| {
        let faults = Faults {
            seed,
            drop: 0.3,
            duplicate: 0.1,
            delay_ns: 2 * MS,
            ..Faults::default()
        };
        let device = Faulty::new(
            LinkDevice::new(&DirectionConfig::default(), 1, None),
            faults,
        );
        let schedule: Vec<(u64, Vec<u8>)> = (0..200)
            .map(|i| (i * STEP, build_tcp(&key(), i as u32, 0x10, 0)))
            .collect();
        let stages: Vec<Stage<'_>> = vec![(vec![&device], false)];
        let delivered = run(&stages, &schedule, 200 * STEP + 3 * MS).delivered;
        (delivered, device.counts())
    };
    let (first, counts) = outputs(5);
    assert_eq!(outputs(5).0, first);
    assert_ne!(outputs(6).0, first);
    assert_eq!(first.len() as u64, 200 - counts.dropped + counts.duplicated);
}

#[test]
fn the_edge_takes_new_weights_and_refuses_bad_ones_typed() {
    let device = edge(200);
    let reply = device
        .control(r#"{"cmd":"set_weights","reservation":"r1","weights":[0,1]}"#)
        .unwrap();
    assert_eq!(
        reply["config"]["reservations"][0]["paths"][1]["weight"],
        1.0
    );
    let mut out = Vec::new();
    for seq in 0..10 {
        let frame = build_tcp(&key(), seq, 0x10, 10);
        device.receive(0, Port::A, frame, &mut out).unwrap();
    }
    assert!(out
        .iter()
        .all(|(port, f)| *port == Port::B && vlan_id(f) == Some(102)));
    match device.control(r#"{"cmd":"set_weights","reservation":"r1","weights":[0,0]}"#) {
        Err(DeviceError::Refused(crate::control::RequestError::Field(FieldError {
            problem: Problem::Wrr(WrrError::AllZero),
            ..
        }))) => {}
        other => panic!("not refused for its weights: {other:?}"),
    }
    let stats = device.stats();
    assert_eq!(stats["to_net"]["paths"]["r1"][1]["sent"], 10);
    assert_eq!(stats["to_net"]["received"], 10);
}
