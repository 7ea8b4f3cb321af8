//! The socket boundary: AF_PACKET raw sockets and kernel-timestamped UDP.
//! All of braid-dp's `unsafe` code is here.

pub mod packet_socket;
pub mod timestamped_udp;
