"""How many flows each path carries in a run, and which client ports they use.

Stock switches hash flows onto a select group's buckets, so with few flows a
small share often gets no flow at all (four flows over a 100/900 split leave
the 100 tunnel empty two times in three). The SDX of seed 000 assigns each
new TCP flow a VLAN instead, and the experiments that count "streams per
tunnel" need exactly that: they choose here how many flows go on each path
and with which client ports (iperf3 `--cport`), and
`core.rules.flow_pinning.pin_client_ports` makes the rules that send them so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from braid.core.errors import InputError

PORTS: Final = range(42000, 60000)


class PortRotation:
    """Client ports for successive runs: a run's sockets may linger in TIME_WAIT, so the
    next run takes the next ports rather than the same ones."""

    def __init__(self, ports: range = PORTS) -> None:
        self.ports = ports
        self._next = ports.start

    def take(self, count: int) -> int:
        """The first of `count` consecutive ports not handed out lately."""
        if count > len(self.ports):
            raise InputError("streams", f"at most {len(self.ports)} streams")
        if self._next + count > self.ports.stop:
            self._next = self.ports.start
        first = self._next
        self._next += count
        return first


def apportion(flows: int, weights: Sequence[int]) -> list[int]:
    """Flows per path in proportion to `weights` (largest remainder; each path >= 1 if it can)."""
    if flows < 0 or not weights or any(w <= 0 for w in weights):
        raise InputError("weights", "need a non-negative flow count and positive weights")
    total = sum(weights)
    exact = [flows * w / total for w in weights]
    counts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: exact[i] - counts[i], reverse=True)
    for i in order[: flows - sum(counts)]:
        counts[i] += 1
    for i, count in enumerate(counts):  # a path with a share should carry a flow
        if count == 0 and flows >= len(weights):
            donor = max(range(len(counts)), key=lambda j: counts[j])
            counts[donor] -= 1
            counts[i] = 1
    return counts


def placements(counts: Sequence[int], first_port: int) -> list[tuple[int, int]]:
    """(path index, client port) for consecutive client ports, path by path."""
    out: list[tuple[int, int]] = []
    port = first_port
    for path_index, count in enumerate(counts):
        for _ in range(count):
            out.append((path_index, port))
            port += 1
    return out


def wire_factor(mtu: int) -> float:
    """Link bits per TCP payload bit at `mtu` (Ethernet + 802.1Q header; IPv4 + TCP with
    timestamps): what a reservation must carry for a goodput."""
    return (mtu + 18) / (mtu - 52)


def fit_flows(
    flows: int, flow_bps: float, shares: Sequence[int], spare: Sequence[int]
) -> list[int]:
    """Whole flows of `flow_bps` per path, never more on a path than its share carries;
    flows that fit nowhere go where the most unbooked capacity is (`spare`, per path)."""
    if len(shares) != len(spare) or not shares or flow_bps <= 0:
        raise InputError("shares", "need one share and one spare capacity per path")
    counts = [min(flows, int(share / flow_bps + 1e-9)) for share in shares]
    while sum(counts) > flows:
        counts[counts.index(max(counts))] -= 1
    room = [s - c * flow_bps + p for s, c, p in zip(shares, counts, spare, strict=True)]
    for _ in range(flows - sum(counts)):
        best = max(range(len(room)), key=lambda i: room[i])
        counts[best] += 1
        room[best] -= flow_bps
    return counts
