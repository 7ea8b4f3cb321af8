"""Round-trip times over UDP between two lab hosts: an echo server and a probe.

`python -m braid.adapters.dataplane.rtt echo PORT SECONDS` echoes datagrams;
`python -m braid.adapters.dataplane.rtt probe IP PORT COUNT INTERVAL` sends
COUNT numbered datagrams INTERVAL seconds apart and prints a JSON list of
round-trip times in milliseconds (null for those that never came back).
Unlike ping it needs nothing installed and times in nanoseconds.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import sys
import time
from typing import Final

__all__ = ["echo", "probe"]

_PACKET: Final = struct.Struct("!QQ")  # sequence number, send time (ns)
_LATE: Final = 2.0  # seconds to wait for stragglers after the last send


def echo(port: int, seconds: float) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("0.0.0.0", port))
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([sock], [], [], left)
            if ready:
                data, peer = sock.recvfrom(2048)
                sock.sendto(data, peer)


def probe(ip: str, port: int, count: int, interval: float) -> list[float | None]:
    rtts: list[float | None] = [None] * count
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        start = time.monotonic()
        sent = 0
        while True:
            now = time.monotonic()
            if sent < count and now >= start + sent * interval:
                sock.sendto(_PACKET.pack(sent, time.monotonic_ns()), (ip, port))
                sent += 1
                continue
            next_send = start + sent * interval if sent < count else None
            end = next_send if next_send is not None else start + count * interval + _LATE
            if next_send is None and (now >= end or all(r is not None for r in rtts)):
                return rtts
            ready, _, _ = select.select([sock], [], [], max(0.0, end - now))
            if ready:
                _receive(sock, rtts)


def _receive(sock: socket.socket, rtts: list[float | None]) -> None:
    data = sock.recv(2048)
    arrived = time.monotonic_ns()
    if len(data) == _PACKET.size:
        sequence, sent_ns = _PACKET.unpack(data)
        if sequence < len(rtts):
            rtts[sequence] = (arrived - sent_ns) / 1e6


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "echo":
        echo(int(argv[1]), float(argv[2]))
        return 0
    if len(argv) == 5 and argv[0] == "probe":
        rtts = probe(argv[1], int(argv[2]), int(argv[3]), float(argv[4]))
        print(json.dumps(rtts))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
