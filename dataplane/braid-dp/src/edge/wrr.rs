//! Per-packet weighted round robin over paths, in bursts (MPSDN §III-C).
//!
//! Each turn a path is chosen by smooth weighted round robin (every path
//! gains its weight, the one with the most credit is chosen and pays the
//! total), and then carries `burst` packets. Over `sum(weights)` turns every
//! path gets exactly its weight in turns, spread out rather than bunched.
//! Weights change at run time; a path of weight 0 gets nothing and the
//! others carry the traffic.

use std::fmt;

use crate::common::field::{FieldError, Problem};

/// Weights are scaled to integers with this resolution unless all are whole numbers.
const SCALE: f64 = 1_000_000.0;
const MAX_BURST: u32 = 1_000_000;

/// Why weights or a burst are refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WrrError {
    NoPaths,
    /// Not finite, or below zero.
    BadWeight(f64),
    AllZero,
    /// Not one weight per path.
    Count {
        given: usize,
        paths: usize,
    },
    Burst(u64),
}

impl WrrError {
    /// The field at fault: `weights` or `burst`.
    pub fn field(&self) -> &'static str {
        match self {
            WrrError::Burst(_) => "burst",
            _ => "weights",
        }
    }
}

impl fmt::Display for WrrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrrError::NoPaths => write!(f, "at least one path is needed"),
            WrrError::BadWeight(weight) => write!(f, "{weight} is not a finite number >= 0"),
            WrrError::AllZero => write!(f, "at least one must be above 0"),
            WrrError::Count { given, paths } => write!(f, "{given} given for {paths} paths"),
            WrrError::Burst(burst) => write!(f, "{burst} is outside 1 to {MAX_BURST} packets"),
        }
    }
}

impl std::error::Error for WrrError {}

impl From<WrrError> for FieldError {
    fn from(error: WrrError) -> FieldError {
        FieldError::new(error.field(), Problem::Wrr(error))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrr {
    weights: Vec<u64>,
    credit: Vec<i128>,
    burst: u32,
    path: usize,
    left: u32,
}

/// Checks weights (finite, not negative, one above zero) and makes them integers.
pub fn integer_weights(weights: &[f64]) -> Result<Vec<u64>, WrrError> {
    if weights.is_empty() {
        return Err(WrrError::NoPaths);
    }
    if let Some(bad) = weights.iter().find(|w| !w.is_finite() || **w < 0.0) {
        return Err(WrrError::BadWeight(*bad));
    }
    let max = weights.iter().cloned().fold(0.0f64, f64::max);
    if max <= 0.0 {
        return Err(WrrError::AllZero);
    }
    let whole = weights.iter().all(|w| w.fract() == 0.0 && *w <= 1e12);
    Ok(weights
        .iter()
        .map(|w| {
            if whole {
                *w as u64
            } else {
                (w / max * SCALE).round() as u64
            }
        })
        .collect())
}

pub fn check_burst(burst: u64) -> Result<u32, WrrError> {
    if (1..=u64::from(MAX_BURST)).contains(&burst) {
        Ok(burst as u32)
    } else {
        Err(WrrError::Burst(burst))
    }
}

impl Wrr {
    pub fn new(weights: &[f64], burst: u32) -> Result<Wrr, WrrError> {
        let weights = integer_weights(weights)?;
        let burst = check_burst(u64::from(burst))?;
        Ok(Wrr {
            credit: vec![0; weights.len()],
            weights,
            burst,
            path: 0,
            left: 0,
        })
    }

    #[cfg(test)]
    pub fn paths(&self) -> usize {
        self.weights.len()
    }

    /// New weights (as many as paths), applied from the next packet on.
    pub fn set_weights(&mut self, weights: &[f64]) -> Result<(), WrrError> {
        if weights.len() != self.weights.len() {
            return Err(WrrError::Count {
                given: weights.len(),
                paths: self.weights.len(),
            });
        }
        self.weights = integer_weights(weights)?;
        self.credit.iter_mut().for_each(|c| *c = 0);
        self.left = 0;
        Ok(())
    }

    /// The path (index) of the next packet.
    pub fn next_path(&mut self) -> usize {
        if self.left == 0 {
            self.path = self.next_turn();
            self.left = self.burst;
        }
        self.left -= 1;
        self.path
    }

    fn next_turn(&mut self) -> usize {
        let total: i128 = self.weights.iter().map(|&w| i128::from(w)).sum();
        let mut best = 0;
        for i in 0..self.weights.len() {
            self.credit[i] += i128::from(self.weights[i]);
            if self.credit[i] > self.credit[best] {
                best = i;
            }
        }
        self.credit[best] -= total;
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(wrr: &mut Wrr, packets: usize) -> Vec<usize> {
        let mut counts = vec![0; wrr.paths()];
        for _ in 0..packets {
            counts[wrr.next_path()] += 1;
        }
        counts
    }

    #[test]
    fn exact_shares_over_whole_rounds() {
        let mut wrr = Wrr::new(&[3.0, 1.0, 2.0], 1).unwrap();
        assert_eq!(shares(&mut wrr, 6 * 1000), [3000, 1000, 2000]);
        let mut wrr = Wrr::new(&[2.0, 1.0], 8).unwrap();
        assert_eq!(shares(&mut wrr, 3 * 8 * 500), [8000, 4000]);
    }

    #[test]
    fn packets_go_in_bursts_and_turns_interleave() {
        let mut wrr = Wrr::new(&[1.0, 1.0], 4).unwrap();
        let order: Vec<usize> = (0..16).map(|_| wrr.next_path()).collect();
        assert_eq!(order, [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1]);
        // Smooth: 2:1 interleaves the turns instead of bunching them.
        let mut wrr = Wrr::new(&[2.0, 1.0], 1).unwrap();
        let order: Vec<usize> = (0..6).map(|_| wrr.next_path()).collect();
        assert_eq!(order, [0, 1, 0, 0, 1, 0]);
    }

    #[test]
    fn plan_weights_as_fractions_give_their_shares() {
        let mut wrr = Wrr::new(&[1.0 / 3.0, 2.0 / 3.0], 1).unwrap();
        let counts = shares(&mut wrr, 300_000);
        assert!((counts[0] as i64 - 100_000).abs() <= 1, "{counts:?}");
    }

    #[test]
    fn a_weight_dropped_to_zero_moves_traffic_to_the_others_at_once() {
        let mut wrr = Wrr::new(&[1.0, 1.0, 2.0], 4).unwrap();
        wrr.next_path();
        wrr.set_weights(&[1.0, 0.0, 1.0]).unwrap();
        let counts = shares(&mut wrr, 8000);
        assert_eq!(counts, [4000, 0, 4000]);
        wrr.set_weights(&[0.0, 5.0, 0.0]).unwrap();
        assert_eq!(shares(&mut wrr, 100), [0, 100, 0]);
    }

    #[test]
    fn bad_weights_are_refused_and_change_nothing() {
        let mut wrr = Wrr::new(&[1.0, 1.0], 1).unwrap();
        let before = wrr.clone();
        for bad in [
            vec![0.0, 0.0],
            vec![1.0],
            vec![-1.0, 2.0],
            vec![f64::NAN, 1.0],
        ] {
            let error = FieldError::from(wrr.set_weights(&bad).unwrap_err()).to_string();
            assert!(error.starts_with("weights:"), "{error}");
            assert_eq!(wrr, before);
        }
        assert!(Wrr::new(&[], 1).is_err());
        assert!(Wrr::new(&[1.0], 0).is_err());
        assert_eq!(check_burst(2_000_000), Err(WrrError::Burst(2_000_000)));
        assert_eq!(
            FieldError::from(WrrError::Burst(0)).to_string(),
            "burst: 0 is outside 1 to 1000000 packets"
        );
    }
}
