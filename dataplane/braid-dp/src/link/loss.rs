//! Packet loss models: independent random loss and bursty loss (Gilbert–Elliott).

use crate::common::rng::SplitMix64;

/// The two-state Gilbert–Elliott channel, probabilities in [0, 1].
///
/// In the *good* state a packet is lost with `good_loss`, in the *bad* state
/// with `bad_loss`; after each packet the channel moves good→bad with `p` and
/// bad→good with `r`. Mean burst length in the bad state is 1/r.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertElliott {
    pub p: f64,
    pub r: f64,
    pub bad_loss: f64,
    pub good_loss: f64,
}

#[cfg(test)]
impl GilbertElliott {
    /// The long-run share of lost packets.
    pub fn mean_loss(&self) -> f64 {
        if self.p + self.r == 0.0 {
            return self.good_loss;
        }
        let bad_share = self.p / (self.p + self.r);
        bad_share * self.bad_loss + (1.0 - bad_share) * self.good_loss
    }
}

/// The loss state of one direction: the random rate, the optional bursty
/// channel and where that channel currently is.
#[derive(Debug, Clone)]
pub struct LossModel {
    random: f64,
    bursty: Option<GilbertElliott>,
    in_bad_state: bool,
}

impl LossModel {
    pub fn new(random: f64, bursty: Option<GilbertElliott>) -> Self {
        LossModel {
            random,
            bursty,
            in_bad_state: false,
        }
    }

    /// Replaces the parameters; a bursty channel keeps its state if it stays on.
    pub fn reconfigure(&mut self, random: f64, bursty: Option<GilbertElliott>) {
        self.random = random;
        if bursty.is_none() {
            self.in_bad_state = false;
        }
        self.bursty = bursty;
    }

    /// Decides whether the next packet is lost (both models apply independently).
    pub fn lose_next(&mut self, rng: &mut SplitMix64) -> bool {
        let bursty_loss = match self.bursty {
            Some(channel) => self.step_channel(channel, rng),
            None => false,
        };
        let random_loss = rng.chance(self.random);
        bursty_loss || random_loss
    }

    fn step_channel(&mut self, channel: GilbertElliott, rng: &mut SplitMix64) -> bool {
        let loss = if self.in_bad_state {
            channel.bad_loss
        } else {
            channel.good_loss
        };
        let lost = rng.chance(loss);
        let switch = if self.in_bad_state {
            channel.r
        } else {
            channel.p
        };
        if rng.chance(switch) {
            self.in_bad_state = !self.in_bad_state;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss_share(model: &mut LossModel, n: usize) -> f64 {
        let mut rng = SplitMix64::new(11);
        let lost = (0..n).filter(|_| model.lose_next(&mut rng)).count();
        lost as f64 / n as f64
    }

    #[test]
    fn no_loss_configured_loses_nothing() {
        let mut model = LossModel::new(0.0, None);
        assert_eq!(loss_share(&mut model, 10_000), 0.0);
    }

    #[test]
    fn random_loss_matches_its_rate() {
        let mut model = LossModel::new(0.05, None);
        let share = loss_share(&mut model, 200_000);
        assert!((share - 0.05).abs() < 0.003, "share {share}");
    }

    #[test]
    fn bursty_loss_matches_its_mean_and_comes_in_bursts() {
        let channel = GilbertElliott {
            p: 0.01,
            r: 0.25,
            bad_loss: 1.0,
            good_loss: 0.0,
        };
        let mut model = LossModel::new(0.0, Some(channel));
        let mut rng = SplitMix64::new(3);
        let outcomes: Vec<bool> = (0..400_000).map(|_| model.lose_next(&mut rng)).collect();
        let share = outcomes.iter().filter(|&&l| l).count() as f64 / outcomes.len() as f64;
        assert!((share - channel.mean_loss()).abs() < 0.005, "share {share}");
        // Losses cluster: after a loss the next packet is lost with about 1 - r.
        let pairs = outcomes.windows(2).filter(|w| w[0]).count();
        let follow = outcomes.windows(2).filter(|w| w[0] && w[1]).count();
        let after_loss = follow as f64 / pairs as f64;
        assert!(
            (after_loss - 0.75).abs() < 0.03,
            "after a loss {after_loss}"
        );
    }

    #[test]
    fn turning_bursty_loss_off_leaves_the_bad_state() {
        let channel = GilbertElliott {
            p: 1.0,
            r: 0.0,
            bad_loss: 1.0,
            good_loss: 0.0,
        };
        let mut model = LossModel::new(0.0, Some(channel));
        let mut rng = SplitMix64::new(5);
        model.lose_next(&mut rng);
        assert!(model.lose_next(&mut rng));
        model.reconfigure(0.0, None);
        assert!(!model.lose_next(&mut rng));
    }
}
