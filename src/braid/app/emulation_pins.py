"""Per-flow path placement, as seed 000's SDX does it: each new TCP flow gets a tunnel's VLAN.

Stock switches hash flows onto a select group's buckets, so with few flows a
small share often gets no flow at all (four flows over a 100/900 split leave
the 100 tunnel empty two times in three). The SDX of seed 000 assigns each
new TCP flow a VLAN instead, and the experiments that count "streams per
tunnel" need exactly that. These rules do it for flows whose client port is
known in advance (iperf3 `--cport`): one exact 5-tuple rule per flow and
direction, above the compiled entry rule, pushing the chosen path's VLAN
from the compiled plan. Everything else of the reservation still follows the
select group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from braid.core.errors import InputError
from braid.core.rules.compiler import ENTRY_PRIORITY
from braid.core.rules.model import (
    ETH_TYPE_IPV4,
    FlowRule,
    Match,
    Output,
    PortMap,
    PushVlan,
    RulePlan,
    RuleRequest,
    RuleSet,
)

PIN_PRIORITY: Final = ENTRY_PRIORITY + 100
TCP: Final = 6
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


def pin_rule_sets(
    plan: RulePlan, request: RuleRequest, ports: PortMap, pinned: Sequence[tuple[int, int]]
) -> tuple[RuleSet, ...]:
    """Exact-flow entry rules, both directions, for TCP flows from `request.src_host`."""
    if not pinned:
        return ()
    src, dst = ports.host(request.src_host), ports.host(request.dst_host)
    forward: list[FlowRule] = []
    reverse: list[FlowRule] = []
    for index, client_port in pinned:
        if not 0 <= index < len(plan.vlans):
            raise InputError("pinned", f"path index {index} outside 0..{len(plan.vlans) - 1}")
        path = request.allocations[index].path
        vlan = plan.vlans[index]
        out_fwd = ports.link_port(path.nodes[0], path.links[0])
        out_rev = ports.link_port(path.nodes[-1], path.links[-1])
        forward.append(
            FlowRule(
                PIN_PRIORITY,
                Match(in_port=src.port, eth_type=ETH_TYPE_IPV4, ip_proto=TCP,
                      ipv4_src=src.ipv4, ipv4_dst=dst.ipv4, tp_src=client_port),
                (PushVlan(vlan), Output(out_fwd)),
                plan.cookie,
            )
        )  # fmt: skip
        reverse.append(
            FlowRule(
                PIN_PRIORITY,
                Match(in_port=dst.port, eth_type=ETH_TYPE_IPV4, ip_proto=TCP,
                      ipv4_src=dst.ipv4, ipv4_dst=src.ipv4, tp_dst=client_port),
                (PushVlan(vlan), Output(out_rev)),
                plan.cookie,
            )
        )  # fmt: skip
    return (
        RuleSet.of(src.switch, ports.switch(src.switch).dpid, forward),
        RuleSet.of(dst.switch, ports.switch(dst.switch).dpid, reverse),
    )


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
