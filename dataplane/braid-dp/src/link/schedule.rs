//! When a packet leaves: serialisation at the configured rate, then the
//! one-way delay with jitter, never before the packet ahead of it.
//!
//! Times are nanoseconds on a monotonic clock; nothing here reads a clock.

/// The departure schedule of one direction.
#[derive(Debug, Clone, Default)]
pub struct DepartureScheduler {
    /// When the emulated wire finishes serialising what it has accepted.
    wire_free_at_ns: u64,
    /// Departure time of the last packet accepted: order within a direction is kept.
    last_departure_ns: u64,
}

/// The timing part of a direction's config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub delay_ns: u64,
    pub jitter_ns: u64,
    pub rate_bps: Option<u64>,
}

impl DepartureScheduler {
    /// The departure time of a packet of `len` bytes arriving at `now_ns`.
    ///
    /// `jitter_draw` is uniform in [0, 1) and picks the delay in
    /// [delay − jitter, delay + jitter] (never below zero). A packet whose
    /// drawn time falls before its predecessor's leaves right after it, so
    /// jitter stretches gaps but does not reorder.
    pub fn departure(&mut self, now_ns: u64, len: usize, timing: Timing, jitter_draw: f64) -> u64 {
        let sent_ns = match timing.rate_bps {
            Some(rate) => self.serialise(now_ns, len, rate),
            None => now_ns,
        };
        let due = sent_ns + jittered_delay(timing, jitter_draw);
        self.last_departure_ns = self.last_departure_ns.max(due);
        self.last_departure_ns
    }

    /// Token-bucket-free serialisation: the wire sends one packet after the other.
    fn serialise(&mut self, now_ns: u64, len: usize, rate_bps: u64) -> u64 {
        let start = self.wire_free_at_ns.max(now_ns);
        self.wire_free_at_ns = start + transmission_ns(len, rate_bps);
        self.wire_free_at_ns
    }
}

/// How long `len` bytes take on a wire of `rate_bps` (rounded up).
pub fn transmission_ns(len: usize, rate_bps: u64) -> u64 {
    let bits = len as u128 * 8 * 1_000_000_000;
    let rate = rate_bps.max(1) as u128;
    ((bits + rate - 1) / rate) as u64
}

fn jittered_delay(timing: Timing, draw: f64) -> u64 {
    if timing.jitter_ns == 0 {
        return timing.delay_ns;
    }
    let offset = (2.0 * draw - 1.0) * timing.jitter_ns as f64;
    (timing.delay_ns as f64 + offset).max(0.0).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn timing(delay_ns: u64, jitter_ns: u64, rate_bps: Option<u64>) -> Timing {
        Timing {
            delay_ns,
            jitter_ns,
            rate_bps,
        }
    }

    #[test]
    fn plain_delay_adds_to_the_arrival() {
        let mut s = DepartureScheduler::default();
        assert_eq!(
            s.departure(1_000, 100, timing(5 * MS, 0, None), 0.5),
            1_000 + 5 * MS
        );
        assert_eq!(
            s.departure(2_000, 100, timing(5 * MS, 0, None), 0.5),
            2_000 + 5 * MS
        );
    }

    #[test]
    fn jitter_stays_in_its_band_and_never_reorders() {
        let mut s = DepartureScheduler::default();
        let mut rng = crate::common::rng::SplitMix64::new(9);
        let mut last = 0;
        for i in 0..10_000u64 {
            let now = i * 10_000; // a packet every 10 µs, jitter 2 ms: drawn times cross
            let due = s.departure(now, 64, timing(20 * MS, 2 * MS, None), rng.next_f64());
            assert!(due >= last, "reordered at {i}");
            assert!(due >= now + 18 * MS, "below the band at {i}");
            assert!(due <= now.max(last) + 22 * MS, "above the band at {i}");
            last = due;
        }
    }

    #[test]
    fn jitter_larger_than_the_delay_clamps_at_zero() {
        assert_eq!(jittered_delay(timing(MS, 5 * MS, None), 0.0), 0);
        assert_eq!(
            jittered_delay(timing(MS, 5 * MS, None), 0.99999),
            6 * MS - 100
        );
    }

    #[test]
    fn rate_serialises_back_to_back_packets() {
        let mut s = DepartureScheduler::default();
        let rate = Some(8_000_000); // 1 byte per µs
        let t = timing(0, 0, rate);
        assert_eq!(s.departure(0, 1000, t, 0.0), 1_000_000);
        assert_eq!(s.departure(0, 1000, t, 0.0), 2_000_000);
        // An idle wire starts afresh.
        assert_eq!(s.departure(10 * MS, 500, t, 0.0), 10 * MS + 500_000);
    }

    #[test]
    fn rate_then_delay() {
        let mut s = DepartureScheduler::default();
        let t = timing(25 * MS, 0, Some(1_000_000_000));
        assert_eq!(s.departure(0, 1250, t, 0.0), 10_000 + 25 * MS);
    }

    #[test]
    fn a_delay_lowered_at_run_time_keeps_order() {
        let mut s = DepartureScheduler::default();
        let first = s.departure(0, 64, timing(150 * MS, 0, None), 0.0);
        let second = s.departure(MS, 64, timing(5 * MS, 0, None), 0.0);
        assert_eq!(second, first);
        let later = s.departure(200 * MS, 64, timing(5 * MS, 0, None), 0.0);
        assert_eq!(later, 205 * MS);
    }

    #[test]
    fn transmission_time_rounds_up() {
        assert_eq!(transmission_ns(1, 3_000_000_000), 3);
        assert_eq!(transmission_ns(9000, 10_000_000_000), 7_200);
    }
}
