//! Per-flow TCP resequencing: Algorithm 1 of MPSDN (seed 002) plus what it lacked.
//!
//! Algorithm 1 keeps, per flow, the next expected sequence number and a
//! buffer B of segments that arrived ahead of it:
//!
//! - a SYN sets `expected = seq + len` and is forwarded;
//! - a segment before `expected` (a duplicate or an old one) is forwarded at once;
//! - the expected segment is forwarded, `expected` moves past it, and the
//!   buffered segments it makes contiguous follow it in order;
//! - otherwise, if B holds more than T segments, the segment is stored and
//!   all of B is released in order, ignoring gaps, and `expected` becomes
//!   `last.seq + last.len * LRF` (segments of a loss burst below it then pass
//!   at once, in their order of arrival);
//! - otherwise, if B holds fewer than S segments, the segment is stored;
//! - otherwise the lowest buffered segment leaves if it is not above the new
//!   one (which is then stored), else the new one leaves.
//!
//! braid adds: a hold time (a gap older than it is given up, so a lost
//! segment never stalls a flow), serial-number arithmetic (RFC 1982: sequence
//! numbers wrap), flows that expire when idle, and hard caps on flows and on
//! the segments and bytes held across all flows. At the flow cap a new flow
//! is not tracked (its segments pass unchanged); at the packet or byte cap
//! the arriving segment's flow is released in order, ignoring gaps.
//!
//! No I/O and no clock: time comes in as `now_ns`. Lengths are in sequence
//! space: payload bytes plus one for SYN and one for FIN.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// True when `a` comes before `b` in serial-number order.
pub fn seq_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// The resequencer's knobs (S, T and LRF are Algorithm 1's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReseqParams {
    /// S: most segments held per flow.
    pub buffer_size: usize,
    /// T: held segments beyond which a flow is released ignoring gaps.
    pub threshold: usize,
    /// LRF: after a threshold release, `expected` jumps `last.len * LRF` past the last segment.
    pub lrf: u32,
    /// A gap is given up once a segment behind it has waited this long.
    pub hold_ns: u64,
    /// A flow not seen for this long is forgotten.
    pub idle_ns: u64,
    pub max_flows: usize,
    /// Most segments held across all flows.
    pub max_packets: usize,
    /// Most bytes (frame bytes) held across all flows.
    pub max_bytes: usize,
}

impl Default for ReseqParams {
    fn default() -> Self {
        ReseqParams {
            buffer_size: 1024,
            threshold: 512,
            lrf: 20,
            hold_ns: 200_000_000,
            idle_ns: 60_000_000_000,
            max_flows: 4096,
            max_packets: 65_536,
            max_bytes: 64 << 20,
        }
    }
}

/// One TCP segment as the resequencer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentInfo {
    pub seq: u32,
    /// Sequence-space length: payload + SYN + FIN.
    pub len: u32,
    pub syn: bool,
    /// Bytes the segment costs while held (the frame's length).
    pub bytes: usize,
}

/// What the resequencer did, since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReseqStats {
    /// Forwarded at once because they were the expected segment (or a SYN, or a flow's first).
    pub in_order: u64,
    /// Released from the buffer in order once the gap before them filled.
    pub resequenced: u64,
    /// Forwarded at once because they were before `expected` (duplicates, old, loss burst).
    pub old: u64,
    pub released_threshold: u64,
    pub released_hold: u64,
    /// Released because the buffer was full (S) or the global caps were reached.
    pub released_full: u64,
    pub released_cap: u64,
    /// Segments of flows beyond `max_flows`, passed unchanged.
    pub untracked: u64,
    pub flows_expired: u64,
}

struct Held<P> {
    seq: u32,
    len: u32,
    bytes: usize,
    arrived_ns: u64,
    item: P,
}

struct Flow<P> {
    expected: u32,
    /// Ascending in serial order, all after `expected`.
    held: VecDeque<Held<P>>,
    bytes: usize,
    last_seen_ns: u64,
}

/// Why segments leave the buffer (selects the counter).
#[derive(Clone, Copy)]
enum Release {
    Resequenced,
    Threshold,
    Hold,
    Full,
    Cap,
}

/// Resequences the TCP flows (keyed by `K`) of packets (`P`, moved through).
pub struct Resequencer<K, P> {
    params: ReseqParams,
    flows: HashMap<K, Flow<P>>,
    held_packets: usize,
    held_bytes: usize,
    /// No held segment's hold ends before this (a lower bound; 0 = check now).
    next_hold_check_ns: u64,
    next_sweep_ns: u64,
    pub stats: ReseqStats,
}

impl<K: Hash + Eq + Copy, P> Resequencer<K, P> {
    pub fn new(params: ReseqParams) -> Self {
        Resequencer {
            params,
            flows: HashMap::new(),
            held_packets: 0,
            held_bytes: 0,
            next_hold_check_ns: u64::MAX,
            next_sweep_ns: 0,
            stats: ReseqStats::default(),
        }
    }

    #[cfg(test)]
    pub fn params(&self) -> ReseqParams {
        self.params
    }

    /// New knobs; held segments stay and obey them from the next call.
    pub fn set_params(&mut self, params: ReseqParams) {
        self.params = params;
        self.next_hold_check_ns = 0;
    }

    pub fn held_packets(&self) -> usize {
        self.held_packets
    }

    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// No held segment's hold time ends before this (None: nothing held).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn next_hold_deadline(&self) -> Option<u64> {
        if self.held_packets == 0 || self.next_hold_check_ns == u64::MAX {
            return None;
        }
        Some(self.next_hold_check_ns)
    }

    /// Takes one segment of flow `key`; whatever may leave now is appended to `out`, in order.
    pub fn push(&mut self, now_ns: u64, key: K, info: SegmentInfo, item: P, out: &mut Vec<P>) {
        let params = self.params;
        let (held_packets, held_bytes) = (self.held_packets, self.held_bytes);
        match self.flows.get_mut(&key) {
            Some(flow) => {
                flow.last_seen_ns = now_ns;
                let mut account = Account::default();
                flow.release_held_too_long(now_ns, params.hold_ns, &mut account, out);
                let limits = Limits {
                    params: &params,
                    held_packets,
                    held_bytes,
                };
                let stored = flow.algorithm_1(now_ns, info, item, &limits, &mut account, out);
                let hold_ends = now_ns.saturating_add(params.hold_ns);
                if stored && self.next_hold_check_ns > hold_ends {
                    self.next_hold_check_ns = hold_ends;
                }
                self.settle(account);
            }
            None => self.first_segment(now_ns, key, info, item, out),
        }
    }

    /// A flow's first segment sets `expected` (braid may start mid-connection).
    fn first_segment(&mut self, now_ns: u64, key: K, info: SegmentInfo, item: P, out: &mut Vec<P>) {
        if self.flows.len() >= self.params.max_flows {
            self.sweep(now_ns, out);
        }
        if self.flows.len() >= self.params.max_flows {
            self.stats.untracked += 1;
            out.push(item);
            return;
        }
        let flow = Flow {
            expected: info.seq.wrapping_add(info.len),
            held: VecDeque::new(),
            bytes: 0,
            last_seen_ns: now_ns,
        };
        self.flows.insert(key, flow);
        self.stats.in_order += 1;
        out.push(item);
    }

    /// Releases gaps held past the hold time and forgets idle flows; call it often
    /// (every millisecond or so) even when no packet arrives.
    pub fn poll(&mut self, now_ns: u64, out: &mut Vec<P>) {
        if now_ns >= self.next_hold_check_ns {
            let mut account = Account::default();
            let mut next = u64::MAX;
            for flow in self.flows.values_mut() {
                if flow.held.is_empty() {
                    continue;
                }
                flow.release_held_too_long(now_ns, self.params.hold_ns, &mut account, out);
                if let Some(oldest) = flow.oldest_arrival() {
                    next = next.min(oldest.saturating_add(self.params.hold_ns));
                }
            }
            self.next_hold_check_ns = next;
            self.settle(account);
        }
        if now_ns >= self.next_sweep_ns {
            self.sweep(now_ns, out);
        }
    }

    /// Forgets flows idle for `idle_ns`, releasing (in order) what they still hold.
    fn sweep(&mut self, now_ns: u64, out: &mut Vec<P>) {
        let idle_ns = self.params.idle_ns;
        let mut account = Account::default();
        let before = self.flows.len();
        self.flows.retain(|_, flow| {
            if now_ns.saturating_sub(flow.last_seen_ns) < idle_ns {
                return true;
            }
            flow.release_all(Release::Hold, &mut account, out);
            false
        });
        self.stats.flows_expired += (before - self.flows.len()) as u64;
        self.settle(account);
        self.next_sweep_ns = now_ns.saturating_add((idle_ns / 4).max(1_000_000));
    }

    /// Releases everything held, in order per flow (at shutdown).
    pub fn flush(&mut self, out: &mut Vec<P>) {
        let mut account = Account::default();
        for flow in self.flows.values_mut() {
            flow.release_all(Release::Hold, &mut account, out);
        }
        self.settle(account);
    }

    fn settle(&mut self, account: Account) {
        self.held_packets = self.held_packets + account.stored_packets - account.released_packets;
        self.held_bytes = self.held_bytes + account.stored_bytes - account.released_bytes;
        let s = &mut self.stats;
        s.in_order += account.in_order;
        s.old += account.old;
        s.resequenced += account.by[0];
        s.released_threshold += account.by[1];
        s.released_hold += account.by[2];
        s.released_full += account.by[3];
        s.released_cap += account.by[4];
    }
}

/// The knobs and the totals held before this call, for one segment's decision.
struct Limits<'a> {
    params: &'a ReseqParams,
    held_packets: usize,
    held_bytes: usize,
}

/// What one call stored and released (applied to the totals afterwards).
#[derive(Default)]
struct Account {
    stored_packets: usize,
    stored_bytes: usize,
    released_packets: usize,
    released_bytes: usize,
    in_order: u64,
    old: u64,
    by: [u64; 5],
}

impl<P> Flow<P> {
    fn oldest_arrival(&self) -> Option<u64> {
        self.held.iter().map(|h| h.arrived_ns).min()
    }

    fn store(&mut self, held: Held<P>, account: &mut Account) {
        let expected = self.expected;
        let offset = held.seq.wrapping_sub(expected);
        // After equal sequence numbers: a duplicate follows its original.
        let at = self
            .held
            .partition_point(|h| h.seq.wrapping_sub(expected) <= offset);
        account.stored_packets += 1;
        account.stored_bytes += held.bytes;
        self.bytes += held.bytes;
        self.held.insert(at, held);
    }

    fn pop_front(&mut self, why: Release, account: &mut Account) -> Option<Held<P>> {
        let held = self.held.pop_front()?;
        account.released_packets += 1;
        account.released_bytes += held.bytes;
        account.by[why as usize] += 1;
        self.bytes -= held.bytes;
        Some(held)
    }

    /// Moves `expected` to the end of `held` if that is further on.
    fn advance_past(&mut self, seq: u32, len: u32) {
        let end = seq.wrapping_add(len);
        if seq_before(self.expected, end) {
            self.expected = end;
        }
    }

    /// Releases the segments now at or before `expected`, advancing it.
    fn release_contiguous(&mut self, why: Release, account: &mut Account, out: &mut Vec<P>) {
        while let Some(head) = self.held.front() {
            if seq_before(self.expected, head.seq) {
                return;
            }
            if let Some(held) = self.pop_front(why, account) {
                self.advance_past(held.seq, held.len);
                out.push(held.item);
            }
        }
    }

    /// Releases everything in order, ignoring gaps; returns the last segment's (seq, len).
    fn release_all(
        &mut self,
        why: Release,
        account: &mut Account,
        out: &mut Vec<P>,
    ) -> Option<(u32, u32)> {
        let mut last = None;
        while let Some(held) = self.pop_front(why, account) {
            last = Some((held.seq, held.len));
            out.push(held.item);
        }
        last
    }

    /// braid's hold time: gives up the first gap while a held segment is too old.
    fn release_held_too_long(
        &mut self,
        now_ns: u64,
        hold_ns: u64,
        account: &mut Account,
        out: &mut Vec<P>,
    ) {
        while let Some(oldest) = self.oldest_arrival() {
            if now_ns.saturating_sub(oldest) < hold_ns {
                return;
            }
            if let Some(head) = self.held.front() {
                self.expected = head.seq;
            }
            self.release_contiguous(Release::Hold, account, out);
        }
    }

    /// Algorithm 1 for one segment of a known flow; true when it stayed held.
    fn algorithm_1(
        &mut self,
        now_ns: u64,
        info: SegmentInfo,
        item: P,
        limits: &Limits<'_>,
        account: &mut Account,
        out: &mut Vec<P>,
    ) -> bool {
        let held = Held {
            seq: info.seq,
            len: info.len,
            bytes: info.bytes,
            arrived_ns: now_ns,
            item,
        };
        if info.syn {
            // A new connection on the same four-tuple: what the old one held goes first.
            self.release_all(Release::Hold, account, out);
            self.expected = info.seq.wrapping_add(info.len);
            account.in_order += 1;
            out.push(held.item);
            return false;
        }
        if seq_before(info.seq, self.expected) {
            account.old += 1;
            out.push(held.item);
            return false;
        }
        if info.seq == self.expected {
            account.in_order += 1;
            self.advance_past(info.seq, info.len);
            out.push(held.item);
            self.release_contiguous(Release::Resequenced, account, out);
            return false;
        }
        let (params, held_packets, held_bytes) =
            (limits.params, limits.held_packets, limits.held_bytes);
        let over_cap = held_packets + account.stored_packets - account.released_packets + 1
            > params.max_packets
            || held_bytes + account.stored_bytes - account.released_bytes + info.bytes
                > params.max_bytes;
        if over_cap {
            self.store(held, account);
            if let Some((seq, len)) = self.release_all(Release::Cap, account, out) {
                self.advance_past(seq, len);
            }
            return false;
        }
        if self.held.len() > params.threshold {
            self.store(held, account);
            if let Some((seq, len)) = self.release_all(Release::Threshold, account, out) {
                self.expected = seq.wrapping_add(len.wrapping_mul(params.lrf));
            }
            return false;
        }
        if self.held.len() < params.buffer_size {
            self.store(held, account);
            return true;
        }
        let lowest_first = self
            .held
            .front()
            .map_or(false, |lowest| !seq_before(info.seq, lowest.seq));
        if lowest_first {
            if let Some(lowest) = self.pop_front(Release::Full, account) {
                out.push(lowest.item);
            }
            self.store(held, account);
            true
        } else {
            account.by[Release::Full as usize] += 1;
            out.push(held.item);
            false
        }
    }
}

#[cfg(test)]
#[path = "reseq_tests.rs"]
mod tests;
