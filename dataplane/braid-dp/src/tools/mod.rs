//! Measuring tools: `braid-dp probe`, `braid-dp blast`, `braid-dp bench-reseq`.

pub mod bench_reseq;
pub mod blast;
pub mod probe;
