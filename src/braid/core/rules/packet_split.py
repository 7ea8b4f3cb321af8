"""Compile a `split: packet` reservation: label-switching rules plus two edge configurations.

Stock switches hash per flow, so per-packet splitting (seed 002) happens in
braid's multipath edge (`braid-dp edge`) between each host and its switch:
the sending edge picks each packet's path by weighted round robin and tags
it with the path's VLAN; the switches only carry tags; the receiving edge
pops the tag and puts TCP back in order. So, per direction and path:

- ingress switch: an *entry* rule matching (host port, the path's VLAN)
  sends the already tagged frame out of the path's first port;
- core switches: (in_port, VLAN) to the next hop, as for flow splitting;
- egress switch: (in_port, VLAN) out to the host port with the tag **kept**,
  since the receiving edge tells paths and reservations apart by it.

ARP between the two hosts is untagged (the edge passes it through): it is
tagged with the first path's VLAN at the ingress switch and popped by the
far edge like any of the reservation's frames. No groups are used.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.model.paths import Path, path_problems
from braid.core.model.topology import Topology
from braid.core.rules.compiler import ENTRY_PRIORITY, LABEL_PRIORITY
from braid.core.rules.labels import LabelPool, Labels, reservation_cookie
from braid.core.rules.model import (
    ETH_TYPE_ARP,
    FlowRule,
    HostPort,
    Match,
    Output,
    PortMap,
    PushVlan,
    RulePlan,
    RuleRequest,
    RuleSet,
)
from braid.core.rules.reseq_sizing import DEFAULT_SEGMENT_BYTES, ReseqSizing, size_resequencer

__all__ = ["EdgeSide", "PacketSplitPlan", "compile_packet_split"]


@dataclass(frozen=True, slots=True)
class EdgeSide:
    """What one host's edge needs: its reservation's traffic from `src_ipv4` to
    `dst_ipv4` goes over `vlans` by `weights` (WRR, `burst` packets a turn);
    what arrives on them is resequenced when `resequence`, with `reseq`."""

    host: str
    reservation_id: str
    src_ipv4: str
    dst_ipv4: str
    vlans: tuple[int, ...]
    weights: tuple[float, ...]
    burst: int
    resequence: bool
    reseq: ReseqSizing


@dataclass(frozen=True, slots=True)
class PacketSplitPlan:
    """The switch rules (install as any plan) and the edges at `src_host` and `dst_host`."""

    rules: RulePlan
    edges: tuple[EdgeSide, EdgeSide]


def compile_packet_split(
    request: RuleRequest,
    topology: Topology,
    ports: PortMap,
    pool: Labels | None = None,
    *,
    resequence: bool,
    measured_one_way_ms: Sequence[float] | None = None,
    segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    burst: int = 1,
) -> PacketSplitPlan:
    """Rules and edge configurations carrying `request` packet by packet over its paths.

    `resequence` is the plan's (`SplitPlan.resequence`). The resequencer is
    sized from `measured_one_way_ms` (one per path, half the measured round
    trip) when given, else from the paths' declared latencies.
    """
    src, dst = ports.host(request.src_host), ports.host(request.dst_host)
    _check(request, topology, src, dst, measured_one_way_ms)
    vlans, _ = (pool or LabelPool()).take(len(request.allocations), 0)
    cookie = reservation_cookie(request.reservation_id)
    entry: defaultdict[str, list[FlowRule]] = defaultdict(list)
    forwarding: defaultdict[str, list[FlowRule]] = defaultdict(list)
    for here, there in ((src, dst), (dst, src)):
        for index, (allocation, vlan) in enumerate(zip(request.allocations, vlans, strict=True)):
            path = allocation.path if here is src else _reversed(allocation.path)
            first = ports.link_port(path.nodes[0], path.links[0])
            entry[here.switch].append(_rule(Match(in_port=here.port, vlan_vid=vlan), first, cookie))
            if index == 0 and request.arp:
                entry[here.switch].append(_arp_rule(here, there, vlan, first, cookie))
            _label_flows(forwarding, ports, path, vlan, there, cookie)
    rules = RulePlan(
        reservation_id=request.reservation_id,
        cookie=cookie,
        vlans=vlans,
        standby_vlan=None,
        group_ids=(),
        entry=_rule_sets(entry, ports),
        forwarding=_rule_sets(forwarding, ports),
    )
    total = sum(a.bandwidth for a in request.allocations)
    one_way = measured_one_way_ms or [a.path.latency_ms(topology) for a in request.allocations]
    sizing = size_resequencer(
        one_way,
        total,
        measured=measured_one_way_ms is not None,
        segment_bytes=segment_bytes,
        burst=burst,
    )
    # The plan's weights (share / total; the edge's round robin needs only their ratios).
    shares = tuple(round(a.bandwidth / total, 6) for a in request.allocations)
    edges = (
        EdgeSide(src.host, request.reservation_id, src.ipv4, dst.ipv4, vlans, shares, burst,
                 resequence, sizing),
        EdgeSide(dst.host, request.reservation_id, dst.ipv4, src.ipv4, vlans, shares, burst,
                 resequence, sizing),
    )  # fmt: skip
    return PacketSplitPlan(rules, edges)


def _check(
    request: RuleRequest,
    topology: Topology,
    src: HostPort,
    dst: HostPort,
    measured: Sequence[float] | None,
) -> None:
    if not request.allocations:
        raise InputError("allocations", "a reservation needs at least one path")
    if request.standby is not None:
        raise InputError("standby", "packet splitting spreads over every path; no standby")
    if src.switch == dst.switch:
        raise InputError("dst_host", f"{src.host} and {dst.host} both hang off {src.switch}")
    if measured is not None and len(measured) != len(request.allocations):
        raise InputError("measured_one_way_ms", "give one delay per path")
    for i, allocation in enumerate(request.allocations):
        if allocation.bandwidth <= 0:
            raise InputError(f"allocations[{i}].bandwidth", "must be positive")
        problems = path_problems(topology, allocation.path, src.switch, dst.switch)
        if problems:
            raise InputError(f"allocations[{i}].path", problems[0])


def _reversed(path: Path) -> Path:
    return Path(path.nodes[::-1], path.links[::-1])


def _rule(match: Match, port: int, cookie: int) -> FlowRule:
    return FlowRule(ENTRY_PRIORITY, match, (Output(port),), cookie)


def _arp_rule(here: HostPort, there: HostPort, vlan: int, port: int, cookie: int) -> FlowRule:
    arp = Match(in_port=here.port, eth_type=ETH_TYPE_ARP, arp_spa=here.ipv4, arp_tpa=there.ipv4)
    return FlowRule(ENTRY_PRIORITY, arp, (PushVlan(vlan), Output(port)), cookie)


def _label_flows(
    tables: defaultdict[str, list[FlowRule]],
    ports: PortMap,
    path: Path,
    vlan: int,
    there: HostPort,
    cookie: int,
) -> None:
    """(in_port, VLAN) to the next hop along `path`; at its end, to the host, still tagged."""
    last = len(path.nodes) - 1
    for j in range(1, last + 1):
        node = path.nodes[j]
        match = Match(in_port=ports.link_port(node, path.links[j - 1]), vlan_vid=vlan)
        port = ports.link_port(node, path.links[j]) if j < last else there.port
        tables[node].append(FlowRule(LABEL_PRIORITY, match, (Output(port),), cookie))


def _rule_sets(tables: defaultdict[str, list[FlowRule]], ports: PortMap) -> tuple[RuleSet, ...]:
    return tuple(RuleSet.of(s, ports.switch(s).dpid, tables[s]) for s in sorted(tables))
