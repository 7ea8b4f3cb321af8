//! The per-packet decision of one direction: drop it (and why) or when it leaves.

use crate::common::rng::SplitMix64;
use crate::link::config::DirectionConfig;
use crate::link::loss::LossModel;
use crate::link::schedule::{DepartureScheduler, Timing};

/// What happens to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Leaves at this monotonic time (ns).
    Depart(u64),
    DroppedCut,
    DroppedLoss,
    DroppedQueueFull,
}

/// Config, loss state, schedule and random source of one direction.
#[derive(Debug, Clone)]
pub struct Shaper {
    config: DirectionConfig,
    loss: LossModel,
    scheduler: DepartureScheduler,
    rng: SplitMix64,
}

impl Shaper {
    pub fn new(config: DirectionConfig, seed: u64) -> Self {
        let loss = LossModel::new(config.loss, config.bursty_loss);
        Shaper {
            config,
            loss,
            scheduler: DepartureScheduler::default(),
            rng: SplitMix64::new(seed),
        }
    }

    /// Takes a new config at run time; the schedule and the loss state carry on.
    pub fn reconfigure(&mut self, config: DirectionConfig) {
        self.loss.reconfigure(config.loss, config.bursty_loss);
        self.config = config;
    }

    /// Decides for a packet of `len` bytes arriving at `now_ns` while
    /// `queued` packets are held. Loss comes before the queue, as on a wire.
    pub fn admit(&mut self, now_ns: u64, len: usize, queued: usize) -> Verdict {
        if self.config.cut {
            return Verdict::DroppedCut;
        }
        if self.loss.lose_next(&mut self.rng) {
            return Verdict::DroppedLoss;
        }
        if queued >= self.config.queue_limit {
            return Verdict::DroppedQueueFull;
        }
        let timing = Timing {
            delay_ns: self.config.delay_ns,
            jitter_ns: self.config.jitter_ns,
            rate_bps: self.config.rate_bps,
        };
        let draw = if timing.jitter_ns > 0 {
            self.rng.next_f64()
        } else {
            0.0
        };
        Verdict::Depart(self.scheduler.departure(now_ns, len, timing, draw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn forwards_with_the_delay() {
        let config = DirectionConfig {
            delay_ns: 20 * MS,
            ..DirectionConfig::default()
        };
        let mut shaper = Shaper::new(config, 1);
        assert_eq!(shaper.admit(MS, 100, 0), Verdict::Depart(21 * MS));
    }

    #[test]
    fn a_cut_drops_everything_until_restored() {
        let config = DirectionConfig {
            cut: true,
            ..DirectionConfig::default()
        };
        let mut shaper = Shaper::new(config.clone(), 1);
        assert_eq!(shaper.admit(0, 100, 0), Verdict::DroppedCut);
        shaper.reconfigure(DirectionConfig {
            cut: false,
            ..config
        });
        assert_eq!(shaper.admit(0, 100, 0), Verdict::Depart(0));
    }

    #[test]
    fn a_full_queue_drops() {
        let config = DirectionConfig {
            queue_limit: 2,
            ..DirectionConfig::default()
        };
        let mut shaper = Shaper::new(config, 1);
        assert_eq!(shaper.admit(0, 100, 1), Verdict::Depart(0));
        assert_eq!(shaper.admit(0, 100, 2), Verdict::DroppedQueueFull);
    }

    #[test]
    fn total_loss_drops_every_packet() {
        let config = DirectionConfig {
            loss: 1.0,
            ..DirectionConfig::default()
        };
        let mut shaper = Shaper::new(config, 1);
        assert!((0..100).all(|_| shaper.admit(0, 100, 0) == Verdict::DroppedLoss));
    }

    #[test]
    fn raising_the_delay_at_run_time_applies_to_new_packets() {
        let config = DirectionConfig {
            delay_ns: 5 * MS,
            ..DirectionConfig::default()
        };
        let mut shaper = Shaper::new(config.clone(), 1);
        assert_eq!(shaper.admit(0, 100, 0), Verdict::Depart(5 * MS));
        shaper.reconfigure(DirectionConfig {
            delay_ns: 150 * MS,
            ..config
        });
        assert_eq!(shaper.admit(MS, 100, 1), Verdict::Depart(151 * MS));
    }
}
