//! Real frame bytes: a captured-style IPv4 SYN, built IPv4/IPv6 segments, tags.

use super::*;

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// An iperf3 client's SYN: 10.0.0.1:41394 -> 10.0.0.2:5201, seq 0x01020304, MSS/SACK/TS/WS options.
const SYN_V4: &str = "
    0200 0000 0002 0200 0000 0001 0800
    4500 003c 1c46 4000 4006 0000 0a00 0001 0a00 0002
    a1b2 1451 0102 0304 0000 0000 a002 faf0 0000 0000
    0204 05b4 0402 080a 0001 e240 0000 0000 0103 0307";

fn v4_key() -> FlowKey {
    FlowKey {
        src: "10.0.0.1".parse().unwrap(),
        dst: "10.0.0.2".parse().unwrap(),
        src_port: 41394,
        dst_port: 5201,
    }
}

#[test]
fn reads_the_syn_of_a_real_ipv4_frame() {
    let frame = hex(SYN_V4);
    assert_eq!(frame.len(), 74);
    let (key, info) = tcp_segment(&frame).unwrap();
    assert_eq!(key, v4_key());
    assert_eq!(
        (info.seq, info.len, info.syn, info.bytes),
        (0x0102_0304, 1, true, 74)
    );
}

#[test]
fn payload_length_counts_in_sequence_space_for_ipv4_and_ipv6() {
    let frame = build_tcp(&v4_key(), u32::MAX - 3, 0x10, 1448);
    let (_, info) = tcp_segment(&frame).unwrap();
    assert_eq!((info.seq, info.len, info.syn), (u32::MAX - 3, 1448, false));
    let key = FlowKey {
        src: "2001:db8::1".parse().unwrap(),
        dst: "2001:db8::2".parse().unwrap(),
        src_port: 40000,
        dst_port: 443,
    };
    // FIN with 10 bytes: 11 in sequence space.
    let frame = build_tcp(&key, 7, 0x11, 10);
    assert_eq!(ethertype(&frame), Some(ETHERTYPE_IPV6));
    let (got, info) = tcp_segment(&frame).unwrap();
    assert_eq!((got, info.seq, info.len), (key, 7, 11));
}

#[test]
fn ethernet_padding_is_not_payload() {
    // A 54-byte pure ACK padded to the 60-byte Ethernet minimum.
    let mut frame = build_tcp(&v4_key(), 100, 0x10, 0);
    frame.resize(60, 0);
    assert_eq!(tcp_segment(&frame).unwrap().1.len, 0);
}

#[test]
fn non_tcp_fragments_and_junk_are_not_segments() {
    let mut udp = hex(SYN_V4);
    udp[14 + 9] = 17;
    assert!(tcp_segment(&udp).is_none());
    let mut fragment = hex(SYN_V4);
    fragment[14 + 6] = 0x20; // more fragments
    assert!(tcp_segment(&fragment).is_none());
    let arp = hex("ffff ffff ffff 0200 0000 0001 0806 0001 0800 0604 0001");
    assert!(tcp_segment(&arp).is_none() && ip_addresses(&arp).is_none());
    for cut in 0..74 {
        assert!(tcp_segment(&hex(SYN_V4)[..cut]).is_none(), "cut at {cut}");
    }
    let mut short_total = hex(SYN_V4);
    short_total[14 + 3] = 0x10; // total length 16 < the headers
    assert!(tcp_segment(&short_total).is_none());
}

#[test]
fn ipv6_extension_headers_are_walked_and_fragments_refused() {
    let key = FlowKey {
        src: "2001:db8::1".parse().unwrap(),
        dst: "2001:db8::2".parse().unwrap(),
        src_port: 1,
        dst_port: 2,
    };
    let plain = build_tcp(&key, 5, 0x10, 4);
    // Insert an 8-byte hop-by-hop header (next header TCP) after the fixed header.
    let mut hop = plain[..54].to_vec();
    hop.extend_from_slice(&[TCP, 0, 1, 4, 0, 0, 0, 0]);
    hop.extend_from_slice(&plain[54..]);
    hop[14 + 6] = 0; // next header: hop-by-hop
    hop[14 + 5] += 8; // payload length
    assert_eq!(tcp_segment(&hop).unwrap().1.seq, 5);
    hop[14 + 6] = 44; // a fragment header
    assert!(tcp_segment(&hop).is_none());
}

#[test]
fn vlan_push_then_pop_gives_the_frame_back() {
    let frame = hex(SYN_V4);
    let mut tagged = Vec::new();
    push_vlan(&frame, 101, &mut tagged);
    assert_eq!(tagged.len(), 78);
    assert_eq!(&tagged[12..16], &[0x81, 0x00, 0x00, 0x65]);
    assert_eq!(vlan_id(&tagged), Some(101));
    assert!(tcp_segment(&tagged).is_none()); // tagged frames are read after the pop
    assert!(pop_vlan(&mut tagged));
    assert_eq!(tagged, frame);
    assert!(!pop_vlan(&mut tagged));
    assert_eq!(tagged, frame);
    assert_eq!(vlan_id(&frame), None);
}

#[test]
fn prefixes_match_their_addresses() {
    let net = Prefix::parse("10.0.0.0/24").unwrap();
    assert!(net.contains("10.0.0.200".parse().unwrap()));
    assert!(!net.contains("10.0.1.1".parse().unwrap()));
    assert!(!net.contains("::1".parse().unwrap()));
    assert!(Prefix::parse("0.0.0.0/0")
        .unwrap()
        .contains("8.8.8.8".parse().unwrap()));
    let host = Prefix::parse("2001:db8::1").unwrap();
    assert_eq!(host.len, 128);
    assert!(host.contains("2001:db8::1".parse().unwrap()));
    assert!(!host.contains("2001:db8::2".parse().unwrap()));
    assert!(Prefix::parse("10.0.0.0/33").is_err());
    assert!(Prefix::parse("ten").is_err());
    assert_eq!(net.to_string(), "10.0.0.0/24");
}
