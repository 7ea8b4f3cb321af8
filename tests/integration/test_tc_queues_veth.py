"""braid's HTB queues with the real `tc` on a veth pair (root): the tree, and its classifier.

Frames are sent the way Open vSwitch's userspace datapath sends them: whole
802.1Q-tagged frames written to a packet socket on the port's netdev. The
classifier must put each VLAN's frames in its queue's class, and everything
else (untagged, other VLANs) in best effort. Skipped without root, except
under CI=true, where that fails the test instead.
"""

from __future__ import annotations

import os
import re
import socket
import struct
import subprocess
from collections.abc import Iterator

import pytest

from braid.adapters.southbound.tc_queues import BEST_EFFORT_CLASS, TcQueues, class_of, held
from braid.core.rules.enforcement import Queue

LINE = 100_000_000
QUEUES = (Queue(1, 7, 60_000_000, 60_000_000, LINE), Queue(1, 9, 33_333_333, LINE, LINE))


def _require_root() -> None:
    if os.geteuid() == 0:
        return
    reason = "tc on veths needs root"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true: failing instead of skipping)")
    pytest.skip(reason)


@pytest.fixture
def veth() -> Iterator[str]:
    _require_root()
    name = f"bq{os.getpid() % 100000}"
    subprocess.run(
        ["ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p"], check=True
    )
    try:
        for end in (name, f"{name}p"):
            subprocess.run(["ip", "link", "set", end, "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "link", "del", name], check=False)


def frame(vlan: int | None) -> bytes:
    """A broadcast IPv4-typed frame, tagged with `vlan` when given (60 bytes of payload)."""
    head = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01"
    tag = b"" if vlan is None else struct.pack("!HH", 0x8100, vlan)
    return head + tag + struct.pack("!H", 0x0800) + bytes(60)


def sent_packets(netdev: str) -> dict[str, int]:
    shown = subprocess.run(
        ["tc", "-s", "class", "show", "dev", netdev], capture_output=True, text=True, check=True
    ).stdout
    found = re.findall(r"class htb (\S+) .*?\n\s*Sent \d+ bytes (\d+) pkt", shown)
    return {name: int(count) for name, count in found}


def test_the_tree_reads_back_and_goes_away(veth: str) -> None:
    tc = TcQueues()
    tc.apply(veth, QUEUES)
    assert tc.dump(veth, 1) == tuple(held(q) for q in QUEUES)
    tc.apply(veth, QUEUES)  # again: nothing changes
    assert tc.dump(veth, 1) == tuple(held(q) for q in QUEUES)
    tc.remove(veth, QUEUES[:1])
    assert tc.dump(veth, 1) == (held(QUEUES[1]),)
    tc.remove(veth, QUEUES[1:])
    qdiscs = subprocess.run(["tc", "qdisc", "show", "dev", veth], capture_output=True, text=True)
    assert "b7a1:" not in qdiscs.stdout


def test_tagged_frames_land_in_their_vlans_class(veth: str) -> None:
    tc = TcQueues()
    tc.apply(veth, QUEUES)
    counts = {7: 5, 9: 3, 11: 2, None: 4}  # VLAN 11 has no queue: best effort
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sender:
        sender.bind((veth, 0))
        for vlan, count in counts.items():
            for _ in range(count):
                sender.send(frame(vlan))
    sent = sent_packets(veth)
    assert sent[class_of(7)] == 5
    assert sent[class_of(9)] == 3
    assert sent[BEST_EFFORT_CLASS] == 2 + 4
    tc.remove(veth, QUEUES)
