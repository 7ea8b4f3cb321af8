//! What the edge does to each frame, without I/O: host → network frames of
//! a reservation get a path by WRR and its VLAN tag; network → host frames
//! on a reservation's VLAN lose the tag and, if TCP, are resequenced.
//! Everything else passes unchanged.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::common::field::{FieldError, Problem};
use crate::edge::config::{EdgeConfig, Reservation};
use crate::edge::reseq::{ReseqParams, Resequencer};
use crate::edge::wrr::Wrr;
use crate::frame::{ip_addresses, pop_vlan, push_vlan, tcp_segment, vlan_id, FlowKey};

struct Splitter {
    reservation: Reservation,
    wrr: Wrr,
    sent: Vec<u64>,
}

impl Splitter {
    fn new(reservation: Reservation) -> Splitter {
        let weights: Vec<f64> = reservation.paths.iter().map(|p| p.weight).collect();
        // The config was checked when read: the weights and burst are valid.
        let wrr = Wrr::new(&weights, reservation.burst).unwrap_or_else(|_| {
            Wrr::new(&[1.0], 1).unwrap_or_else(|e| unreachable!("one weight of 1: {e}"))
        });
        Splitter {
            sent: vec![0; reservation.paths.len()],
            reservation,
            wrr,
        }
    }

    fn matches(&self, frame: &[u8]) -> bool {
        let Reservation { src, dst, .. } = &self.reservation;
        match ip_addresses(frame) {
            Some((s, d)) => {
                src.map_or(true, |p| p.contains(s)) && dst.map_or(true, |p| p.contains(d))
            }
            None => false,
        }
    }
}

/// Host → network.
pub struct Outbound {
    splitters: Vec<Splitter>,
    pub passed: u64,
}

impl Outbound {
    pub fn new(config: &EdgeConfig) -> Outbound {
        Outbound {
            splitters: config
                .reservations
                .iter()
                .cloned()
                .map(Splitter::new)
                .collect(),
            passed: 0,
        }
    }

    /// The frame to send: `frame` itself (false) or the tagged copy in `tagged` (true).
    pub fn route(&mut self, frame: &[u8], tagged: &mut Vec<u8>) -> bool {
        // A frame already tagged is someone else's business.
        if vlan_id(frame).is_none() {
            if let Some(s) = self.splitters.iter_mut().find(|s| s.matches(frame)) {
                let path = s.wrr.next_path();
                s.sent[path] += 1;
                push_vlan(frame, s.reservation.paths[path].vlan, tagged);
                return true;
            }
        }
        self.passed += 1;
        false
    }

    /// New weights for reservation `id` (checked whole; nothing changes on error).
    pub fn set_weights(&mut self, id: &str, weights: &[f64]) -> Result<(), FieldError> {
        let s = self
            .splitters
            .iter_mut()
            .find(|s| s.reservation.id == id)
            .ok_or_else(|| FieldError::new("reservation", Problem::NoReservation(id.into())))?;
        s.wrr.set_weights(weights)?;
        for (path, weight) in s.reservation.paths.iter_mut().zip(weights) {
            path.weight = *weight;
        }
        Ok(())
    }

    /// The reservations as they run now (weights included).
    pub fn reservations(&self) -> Vec<Reservation> {
        self.splitters
            .iter()
            .map(|s| s.reservation.clone())
            .collect()
    }

    pub fn counters_json(&self) -> Value {
        let mut paths = serde_json::Map::new();
        for s in &self.splitters {
            let list: Vec<Value> = s
                .reservation
                .paths
                .iter()
                .zip(&s.sent)
                .map(|(p, sent)| json!({"vlan": p.vlan, "weight": p.weight, "sent": sent}))
                .collect();
            paths.insert(s.reservation.id.clone(), Value::Array(list));
        }
        json!({"paths": paths, "passed": self.passed})
    }
}

/// Network → host counters besides the resequencer's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InboundCounters {
    pub popped: u64,
    pub passed: u64,
    /// Frames off a reservation's VLAN that are not TCP (or not resequenced).
    pub not_resequenced: u64,
}

/// Network → host.
pub struct Inbound {
    /// VLAN → resequence?
    vlans: HashMap<u16, bool>,
    /// Frames that arrived on each of the reservations' VLANs (a path's deliveries: set
    /// against the far edge's `sent`, they give the path's loss).
    arrived: HashMap<u16, u64>,
    pub reseq: Resequencer<FlowKey, Vec<u8>>,
    pub counters: InboundCounters,
}

impl Inbound {
    pub fn new(config: &EdgeConfig) -> Inbound {
        let mut inbound = Inbound {
            vlans: HashMap::new(),
            arrived: HashMap::new(),
            reseq: Resequencer::new(config.reseq),
            counters: InboundCounters::default(),
        };
        inbound.reconfigure(config);
        inbound
    }

    /// New reservations and knobs; the flows being resequenced carry on, the path
    /// counters start again (as the sending side's do).
    pub fn reconfigure(&mut self, config: &EdgeConfig) {
        self.arrived.clear();
        self.vlans = config
            .reservations
            .iter()
            .flat_map(|r| r.paths.iter().map(move |p| (p.vlan, r.resequence)))
            .collect();
        self.reseq.set_params(config.reseq);
    }

    pub fn set_params(&mut self, params: ReseqParams) {
        self.reseq.set_params(params);
    }

    /// Takes one frame from the network; what may go to the host now is appended to `out`.
    pub fn receive(&mut self, now_ns: u64, mut frame: Vec<u8>, out: &mut Vec<Vec<u8>>) {
        let known = vlan_id(&frame).and_then(|vid| Some((vid, *self.vlans.get(&vid)?)));
        let resequence = match known {
            Some((vid, resequence)) => {
                *self.arrived.entry(vid).or_insert(0) += 1;
                resequence
            }
            None => {
                self.counters.passed += 1;
                out.push(frame);
                return;
            }
        };
        pop_vlan(&mut frame);
        self.counters.popped += 1;
        match tcp_segment(&frame) {
            Some((key, info)) if resequence => self.reseq.push(now_ns, key, info, frame, out),
            _ => {
                self.counters.not_resequenced += 1;
                out.push(frame);
            }
        }
    }

    pub fn poll(&mut self, now_ns: u64, out: &mut Vec<Vec<u8>>) {
        self.reseq.poll(now_ns, out);
    }

    pub fn counters_json(&self) -> Value {
        let s = self.reseq.stats;
        let mut arrived: Vec<(u16, u64)> = self.arrived.iter().map(|(v, n)| (*v, *n)).collect();
        arrived.sort_unstable();
        let arrived: Vec<Value> = arrived
            .into_iter()
            .map(|(vlan, frames)| json!({"vlan": vlan, "received": frames}))
            .collect();
        json!({
            "arrived": arrived,
            "popped": self.counters.popped,
            "passed": self.counters.passed,
            "not_resequenced": self.counters.not_resequenced,
            "in_order": s.in_order,
            "resequenced": s.resequenced,
            "old": s.old,
            "released_threshold": s.released_threshold,
            "released_hold": s.released_hold,
            "released_full": s.released_full,
            "released_cap": s.released_cap,
            "untracked": s.untracked,
            "flows_expired": s.flows_expired,
            "buffered_packets": self.reseq.held_packets(),
            "buffered_bytes": self.reseq.held_bytes(),
            "flows": self.reseq.flows(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::build_tcp;

    fn config() -> EdgeConfig {
        EdgeConfig::from_json(&json!({"reservations": [{
            "id": "r1", "src": "10.0.0.1", "dst": "10.0.0.2", "burst": 2,
            "paths": [{"vlan": 101, "weight": 1}, {"vlan": 102, "weight": 1}]
        }]}))
        .unwrap()
    }

    fn key(src: &str, dst: &str) -> FlowKey {
        FlowKey {
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            src_port: 40000,
            dst_port: 5201,
        }
    }

    #[test]
    fn reservation_frames_are_tagged_by_wrr_and_others_pass() {
        let mut out = Outbound::new(&config());
        let mut tagged = Vec::new();
        let frame = build_tcp(&key("10.0.0.1", "10.0.0.2"), 1, 0x10, 100);
        let mut vlans = Vec::new();
        for _ in 0..4 {
            assert!(out.route(&frame, &mut tagged));
            assert_eq!(&tagged[16..], &frame[12..]);
            vlans.push(vlan_id(&tagged).unwrap());
        }
        assert_eq!(vlans, [101, 101, 102, 102]);
        let other = build_tcp(&key("10.0.0.2", "10.0.0.1"), 1, 0x10, 100);
        assert!(!out.route(&other, &mut tagged));
        let arp = vec![0xff; 42];
        assert!(!out.route(&arp, &mut tagged));
        assert_eq!(out.passed, 2);
        let counters = out.counters_json();
        assert_eq!(counters["paths"]["r1"][0]["sent"], 2);
    }

    #[test]
    fn weights_change_at_run_time_and_bad_ones_change_nothing() {
        let mut out = Outbound::new(&config());
        out.set_weights("r1", &[0.0, 1.0]).unwrap();
        let mut tagged = Vec::new();
        let frame = build_tcp(&key("10.0.0.1", "10.0.0.2"), 1, 0x10, 100);
        for _ in 0..10 {
            out.route(&frame, &mut tagged);
            assert_eq!(vlan_id(&tagged), Some(102));
        }
        assert!(out.set_weights("r1", &[0.0, 0.0]).is_err());
        assert_eq!(
            out.set_weights("r9", &[1.0, 1.0]).unwrap_err().problem,
            Problem::NoReservation("r9".into())
        );
        assert_eq!(out.reservations()[0].paths[1].weight, 1.0);
    }

    #[test]
    fn tagged_tcp_is_popped_and_resequenced_and_other_traffic_passes() {
        let mut inbound = Inbound::new(&config());
        let k = key("10.0.0.2", "10.0.0.1");
        let tag = |frame: Vec<u8>, vid| {
            let mut tagged = Vec::new();
            push_vlan(&frame, vid, &mut tagged);
            tagged
        };
        let mut out = Vec::new();
        inbound.receive(0, tag(build_tcp(&k, 1000, 0x10, 100), 101), &mut out);
        inbound.receive(0, tag(build_tcp(&k, 1200, 0x10, 100), 102), &mut out);
        assert_eq!(out.len(), 1);
        inbound.receive(0, tag(build_tcp(&k, 1100, 0x10, 100), 101), &mut out);
        let seqs: Vec<u32> = out.iter().map(|f| tcp_segment(f).unwrap().1.seq).collect();
        assert_eq!(seqs, [1000, 1100, 1200]);
        // Untagged, an unknown VLAN, and UDP on a reservation's VLAN.
        let plain = build_tcp(&k, 5, 0x10, 0);
        inbound.receive(0, plain.clone(), &mut out);
        assert_eq!(out.last(), Some(&plain));
        let foreign = tag(plain.clone(), 200);
        inbound.receive(0, foreign.clone(), &mut out);
        assert_eq!(out.last(), Some(&foreign));
        let mut udp = plain.clone();
        udp[14 + 9] = 17;
        inbound.receive(0, tag(udp.clone(), 102), &mut out);
        assert_eq!(out.last(), Some(&udp));
        let c = inbound.counters_json();
        assert_eq!(
            (c["popped"].as_u64(), c["passed"].as_u64()),
            (Some(4), Some(2))
        );
        assert_eq!(
            (c["resequenced"].as_u64(), c["not_resequenced"].as_u64()),
            (Some(1), Some(1))
        );
        // Per path: two frames on 101, two on 102; the foreign VLAN is not counted.
        assert_eq!(
            c["arrived"],
            json!([{"vlan": 101, "received": 2}, {"vlan": 102, "received": 2}])
        );
    }
}
