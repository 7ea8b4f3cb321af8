//! Ethernet frame bytes: 802.1Q tags pushed and popped, IP addresses and TCP
//! segments read from IPv4 and IPv6. No I/O; anything malformed is "not TCP".

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::edge::reseq::SegmentInfo;

/// The longest frame an element takes (64 KiB); longer ones are counted as oversize.
pub const MAX_FRAME: usize = 65_536;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
const TCP: u8 = 6;
const MAC_BYTES: usize = 12;

/// A TCP connection one way: who sends to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The frame's EtherType (after the MAC addresses).
pub fn ethertype(frame: &[u8]) -> Option<u16> {
    be16(frame, MAC_BYTES)
}

/// The VLAN id of an 802.1Q-tagged frame.
pub fn vlan_id(frame: &[u8]) -> Option<u16> {
    if ethertype(frame)? != ETHERTYPE_VLAN {
        return None;
    }
    Some(be16(frame, MAC_BYTES + 2)? & 0x0fff)
}

/// `frame` with an 802.1Q tag (priority 0) for `vid` after its MAC addresses, into `out`.
pub fn push_vlan(frame: &[u8], vid: u16, out: &mut Vec<u8>) {
    out.clear();
    let split = MAC_BYTES.min(frame.len());
    out.extend_from_slice(&frame[..split]);
    out.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
    out.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
    out.extend_from_slice(&frame[split..]);
}

/// Removes the outer 802.1Q tag in place; false (and nothing changed) when untagged.
pub fn pop_vlan(frame: &mut Vec<u8>) -> bool {
    if vlan_id(frame).is_none() || frame.len() < MAC_BYTES + 4 {
        return false;
    }
    frame.drain(MAC_BYTES..MAC_BYTES + 4);
    true
}

/// Where the IP packet starts, and its version's EtherType (untagged frames).
fn ip_start(frame: &[u8]) -> Option<(u16, usize)> {
    match ethertype(frame)? {
        t @ (ETHERTYPE_IPV4 | ETHERTYPE_IPV6) => Some((t, MAC_BYTES + 2)),
        _ => None,
    }
}

/// Source and destination of an untagged IP frame.
pub fn ip_addresses(frame: &[u8]) -> Option<(IpAddr, IpAddr)> {
    let (kind, at) = ip_start(frame)?;
    if kind == ETHERTYPE_IPV4 {
        let b: [u8; 8] = frame.get(at + 12..at + 20)?.try_into().ok()?;
        let src = Ipv4Addr::new(b[0], b[1], b[2], b[3]);
        let dst = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
        return Some((IpAddr::V4(src), IpAddr::V4(dst)));
    }
    let src: [u8; 16] = frame.get(at + 8..at + 24)?.try_into().ok()?;
    let dst: [u8; 16] = frame.get(at + 24..at + 40)?.try_into().ok()?;
    Some((
        IpAddr::V6(Ipv6Addr::from(src)),
        IpAddr::V6(Ipv6Addr::from(dst)),
    ))
}

/// The TCP header's offset and the payload's end, for an unfragmented IPv4 packet.
fn ipv4_tcp(frame: &[u8], at: usize) -> Option<(usize, usize)> {
    let version_ihl = *frame.get(at)?;
    let header = usize::from(version_ihl & 0x0f) * 4;
    if version_ihl >> 4 != 4 || header < 20 || *frame.get(at + 9)? != TCP {
        return None;
    }
    // More fragments, or an offset: only the first fragment has the TCP header, and
    // fragments are not resequenced.
    if be16(frame, at + 6)? & 0x3fff != 0 {
        return None;
    }
    let total = usize::from(be16(frame, at + 2)?);
    Some((at + header, at + total))
}

/// The same for IPv6, through hop-by-hop, routing and destination options.
fn ipv6_tcp(frame: &[u8], at: usize) -> Option<(usize, usize)> {
    if *frame.get(at)? >> 4 != 6 {
        return None;
    }
    let end = at + 40 + usize::from(be16(frame, at + 4)?);
    let (mut next, mut offset) = (*frame.get(at + 6)?, at + 40);
    for _ in 0..8 {
        match next {
            TCP => return Some((offset, end)),
            0 | 43 | 60 => {
                next = *frame.get(offset)?;
                offset += (usize::from(*frame.get(offset + 1)?) + 1) * 8;
            }
            _ => return None, // a fragment, ESP, or not TCP
        }
    }
    None
}

/// The flow and sequence-space facts of an untagged TCP frame; None for anything else.
pub fn tcp_segment(frame: &[u8]) -> Option<(FlowKey, SegmentInfo)> {
    let (kind, at) = ip_start(frame)?;
    let (tcp, end) = if kind == ETHERTYPE_IPV4 {
        ipv4_tcp(frame, at)?
    } else {
        ipv6_tcp(frame, at)?
    };
    let data_offset = usize::from(*frame.get(tcp + 12)? >> 4) * 4;
    let flags = *frame.get(tcp + 13)?;
    if data_offset < 20 || end > frame.len() || tcp + data_offset > end {
        return None;
    }
    let (src, dst) = ip_addresses(frame)?;
    let (syn, fin) = (flags & 0x02 != 0, flags & 0x01 != 0);
    let payload = (end - tcp - data_offset) as u32;
    let key = FlowKey {
        src,
        dst,
        src_port: be16(frame, tcp)?,
        dst_port: be16(frame, tcp + 2)?,
    };
    let info = SegmentInfo {
        seq: be32(frame, tcp + 4)?,
        len: payload + u32::from(syn) + u32::from(fin),
        syn,
        bytes: frame.len(),
    };
    Some((key, info))
}

/// Why a text is not an address prefix (the text as given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixError {
    NotAnAddress(String),
    Length { text: String, max: u8 },
}

impl std::fmt::Display for PrefixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrefixError::NotAnAddress(text) => {
                write!(f, "{text:?} is not an IP address or prefix")
            }
            PrefixError::Length { text, max } => {
                write!(f, "{text:?}: the prefix length is not 0 to {max}")
            }
        }
    }
}

impl std::error::Error for PrefixError {}

/// An address prefix like 10.0.0.0/24 or 2001:db8::/32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    pub addr: IpAddr,
    pub len: u8,
}

impl Prefix {
    pub fn parse(text: &str) -> Result<Prefix, PrefixError> {
        let (addr, len) = match text.split_once('/') {
            Some((addr, len)) => (addr, Some(len)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| PrefixError::NotAnAddress(text.to_string()))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = match len {
            None => max,
            Some(len) => len
                .parse::<u8>()
                .ok()
                .filter(|l| *l <= max)
                .ok_or_else(|| PrefixError::Length {
                    text: text.to_string(),
                    max,
                })?,
        };
        Ok(Prefix { addr, len })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.len)).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.len))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// A TCP frame (no checksums: for tests and the benchmark) from `src` to `dst`.
pub fn build_tcp(key: &FlowKey, seq: u32, flags: u8, payload: usize) -> Vec<u8> {
    let mut frame = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    let tcp_len = 20 + payload;
    match (key.src, key.dst) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            frame.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
            frame.extend_from_slice(&[0x45, 0]);
            frame.extend_from_slice(&((20 + tcp_len) as u16).to_be_bytes());
            frame.extend_from_slice(&[0, 0, 0x40, 0, 64, TCP, 0, 0]);
            frame.extend_from_slice(&src.octets());
            frame.extend_from_slice(&dst.octets());
        }
        (src, dst) => {
            let v6 = |ip: IpAddr| match ip {
                IpAddr::V6(ip) => ip.octets(),
                IpAddr::V4(ip) => ip.to_ipv6_mapped().octets(),
            };
            frame.extend_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
            frame.extend_from_slice(&[0x60, 0, 0, 0]);
            frame.extend_from_slice(&(tcp_len as u16).to_be_bytes());
            frame.extend_from_slice(&[TCP, 64]);
            frame.extend_from_slice(&v6(src));
            frame.extend_from_slice(&v6(dst));
        }
    }
    frame.extend_from_slice(&key.src_port.to_be_bytes());
    frame.extend_from_slice(&key.dst_port.to_be_bytes());
    frame.extend_from_slice(&seq.to_be_bytes());
    frame.extend_from_slice(&[0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    frame.resize(frame.len() + payload, 0xab);
    frame
}

#[cfg(test)]
mod tests;
