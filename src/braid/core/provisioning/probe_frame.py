"""The frame a circuit check injects: Ethernet, IPv4 between the reservation's hosts, UDP.

The IPv4 addresses are the reservation's own, so the frame is what the
reservation's traffic looks like to any rule that cares. Its Ethernet
destination is a locally administered address no host owns: the receiving
host's kernel drops it before IP sees it, so a probe never draws an answer
(an ICMP "port unreachable" would travel back over the reverse path and add
to the very counters the check compares). The UDP ports and payload say
"braid probe" to anyone capturing on the wire.
"""

from __future__ import annotations

import ipaddress
import struct
from typing import Final

from braid.core.errors import InputError

__all__ = [
    "PROBE_ETH_DST",
    "PROBE_ETH_SRC",
    "PROBE_MAGIC",
    "PROBE_UDP_PORT",
    "probe_frame",
]

PROBE_ETH_SRC: Final = "02:b7:a1:00:00:01"
PROBE_ETH_DST: Final = "02:b7:a1:00:00:02"
PROBE_UDP_PORT: Final = 0xB7A1  # 47009, source and destination
PROBE_MAGIC: Final = b"braid-probe"
MIN_FRAME: Final = 60  # Ethernet's minimum without the FCS
_ETH_TYPE_IPV4: Final = 0x0800
_UDP: Final = 17
_TTL: Final = 64


def probe_frame(ipv4_src: str, ipv4_dst: str, tag: int) -> bytes:
    """An untagged Ethernet/IPv4/UDP frame from `ipv4_src` to `ipv4_dst`.

    `tag` (0..65535) goes in the IPv4 identification and the payload, so a
    capture tells the probes of one path and direction from another's.
    """
    if not 0 <= tag <= 0xFFFF:
        raise InputError("probe.tag", f"must lie in 0..65535, got {tag}")
    src, dst = _address(ipv4_src, "probe.ipv4_src"), _address(ipv4_dst, "probe.ipv4_dst")
    payload = PROBE_MAGIC + struct.pack("!H", tag)
    udp = struct.pack("!HHHH", PROBE_UDP_PORT, PROBE_UDP_PORT, 8 + len(payload), 0) + payload
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), tag, 0, _TTL, _UDP, 0, src, dst)
    header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
    ethernet = _mac(PROBE_ETH_DST) + _mac(PROBE_ETH_SRC) + struct.pack("!H", _ETH_TYPE_IPV4)
    frame = ethernet + header + udp
    return frame + bytes(max(0, MIN_FRAME - len(frame)))


def _address(text: str, field: str) -> bytes:
    try:
        return ipaddress.IPv4Address(text).packed
    except ValueError as exc:
        raise InputError(field, f"not an IPv4 address: {text!r}") from exc


def _mac(text: str) -> bytes:
    return bytes(int(part, 16) for part in text.split(":"))


def _checksum(header: bytes) -> int:
    """The ones' complement sum of the header's 16-bit words (RFC 791)."""
    total = sum(int.from_bytes(header[i : i + 2], "big") for i in range(0, len(header), 2))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF
