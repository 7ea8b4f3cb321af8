//! Small pieces every element uses.

pub mod rng;
