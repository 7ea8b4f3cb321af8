//! The multipath edge (`braid-dp edge`): host → network frames of a
//! reservation spread over its VLAN paths by weighted round robin; network →
//! host frames untagged and their TCP flows resequenced.

pub mod config;
pub mod device;
pub mod logic;
pub mod protocol;
pub mod reseq;
pub mod runtime;
pub mod wrr;
