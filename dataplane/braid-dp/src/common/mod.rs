//! Small pieces every element uses.

pub mod field;
pub mod rng;
pub mod sync;
