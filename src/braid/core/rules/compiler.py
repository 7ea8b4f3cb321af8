"""Compile a reservation's allocation into abstract OpenFlow 1.3 rule sets.

TALON's rule creator (seed 004, Algorithm 2) and the SDX of seed 000, per
direction of the connection:

- ingress switch: an *entry* rule matching the two hosts' IPv4 traffic hands
  it to a select group whose buckets are the paths, weighted by their shares;
  a bucket pushes the path's VLAN and sends it out of the path's first port.
  With a standby path each bucket goes through a fast-failover group instead:
  primary first, watched by port liveness, standby second. ARP between the
  two hosts follows the first path;
- core switches: match (in_port, VLAN) and forward to the next hop;
- egress switch: match (in_port, VLAN), pop the VLAN, deliver to the host.

The reverse direction mirrors it over the same paths and VLANs (in_port keeps
the two directions apart), so a flow split by the symmetric hash uses one
path both ways. Group and VLAN numbers come from a `LabelPool`.

With a policing the request is also enforced (`braid.core.rules.enforcement`):
each entry rule goes through a meter at the reservation's rate (`hard` only:
a `soft` reservation's excess is not dropped, its queues let it borrow), and
every port a path leaves by gets that path share's queue, tagged by the
path's VLAN, which the rules also name with `set_queue`. Meter ids follow
the select group's id, so they are as unique as the groups.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import reduce
from math import gcd
from typing import Final

from braid.core.errors import InputError
from braid.core.model.paths import Path, path_problems
from braid.core.model.topology import Topology
from braid.core.rules.enforcement import METER_BURST_SECONDS, meter_kbps
from braid.core.rules.labels import LabelPool, Labels, reservation_cookie
from braid.core.rules.model import (
    BRAID_GROUP_IDS,
    ETH_TYPE_ARP,
    ETH_TYPE_IPV4,
    Action,
    Bucket,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    HostPort,
    Match,
    Meter,
    Output,
    Policing,
    PopVlan,
    PortMap,
    PushVlan,
    Queue,
    RulePlan,
    RuleRequest,
    RuleSet,
    SetQueue,
)

__all__ = [
    "ENTRY_PRIORITY",
    "LABEL_PRIORITY",
    "bucket_weights",
    "compile_reservation",
    "group_count",
    "meter_id_of",
]

ENTRY_PRIORITY: Final = 3000
LABEL_PRIORITY: Final = 2000
MAX_WEIGHT: Final = 0xFFFF


@dataclass(frozen=True, slots=True)
class _Leg:
    """One path in one direction with its label."""

    vlan: int
    nodes: tuple[str, ...]
    links: tuple[str, ...]
    share: int


class _Tables:
    """Flows and groups gathered per switch while compiling."""

    def __init__(self) -> None:
        self.flows: defaultdict[str, list[FlowRule]] = defaultdict(list)
        self.groups: defaultdict[str, list[Group]] = defaultdict(list)
        self.meters: defaultdict[str, list[Meter]] = defaultdict(list)
        self.queues: defaultdict[str, list[Queue]] = defaultdict(list)

    def rule_sets(self, ports: PortMap) -> tuple[RuleSet, ...]:
        switches = sorted(set(self.flows) | set(self.groups) | set(self.meters) | set(self.queues))
        return tuple(
            RuleSet.of(
                s,
                ports.switch(s).dpid,
                self.flows[s],
                self.groups[s],
                self.meters[s],
                self.queues[s],
            )
            for s in switches
        )


def bucket_weights(bandwidths: Sequence[int]) -> tuple[int, ...]:
    """Select-bucket weights in the shares' proportions, within OpenFlow's 16 bits."""
    divisor = reduce(gcd, bandwidths)
    weights = [b // divisor for b in bandwidths]
    top = max(weights)
    if top <= MAX_WEIGHT:
        return tuple(weights)
    return tuple(max(1, round(w * MAX_WEIGHT / top)) for w in weights)


def compile_reservation(
    request: RuleRequest, topology: Topology, ports: PortMap, pool: Labels | None = None
) -> RulePlan:
    """The rules that carry `request`'s traffic both ways, split into entry and forwarding."""
    src, dst = ports.host(request.src_host), ports.host(request.dst_host)
    _check(request, topology, src, dst)
    paths = [a.path for a in request.allocations]
    if request.standby is not None:
        paths.append(request.standby)
    per_direction = group_count(len(request.allocations), request.standby is not None) // 2
    vlans, group_ids = (pool or LabelPool()).take(len(paths), 2 * per_direction)
    work = _Compilation(request, ports, reservation_cookie(request.reservation_id), topology)
    shares = [a.bandwidth for a in request.allocations]
    if request.standby is not None:
        shares.append(sum(shares))  # after a fail-over the standby carries all of it
    for index, (here, there) in enumerate(((src, dst), (dst, src))):
        legs = [
            _leg(path, vlan, share, reverse=index == 1)
            for path, vlan, share in zip(paths, vlans, shares, strict=True)
        ]
        for leg in legs:
            work.label_flows(leg, there)
        groups = group_ids[index * per_direction : (index + 1) * per_direction]
        work.ingress(legs, groups, here, there)
    return RulePlan(
        reservation_id=request.reservation_id,
        cookie=work.cookie,
        vlans=vlans[: len(request.allocations)],
        standby_vlan=vlans[-1] if request.standby is not None else None,
        group_ids=group_ids,
        entry=work.entry.rule_sets(ports),
        forwarding=work.forwarding.rule_sets(ports),
    )


def meter_id_of(select_group_id: int) -> int:
    """The meter of the entry rule pointing at select group `select_group_id`."""
    return select_group_id - BRAID_GROUP_IDS.start + 1


def group_count(paths: int, standby: bool) -> int:
    """Group ids a reservation's rules use: a select group per direction, and with a
    standby path a fast-failover group per path and direction."""
    return 2 * (1 + (paths if standby else 0))


def _check(request: RuleRequest, topology: Topology, src: HostPort, dst: HostPort) -> None:
    if not request.allocations:
        raise InputError("allocations", "a reservation needs at least one path")
    if src.switch == dst.switch:
        raise InputError(
            "dst_host",
            f"{src.host} and {dst.host} both hang off {src.switch}; no path to program",
        )
    for i, allocation in enumerate(request.allocations):
        if allocation.bandwidth <= 0:
            raise InputError(f"allocations[{i}].bandwidth", "must be positive")
        _check_path(topology, allocation.path, src, dst, f"allocations[{i}].path")
    if request.standby is not None:
        _check_path(topology, request.standby, src, dst, "standby")


def _check_path(topology: Topology, path: Path, src: HostPort, dst: HostPort, where: str) -> None:
    problems = path_problems(topology, path, src.switch, dst.switch)
    if problems:
        raise InputError(where, problems[0])


def _leg(path: Path, vlan: int, share: int, *, reverse: bool) -> _Leg:
    if reverse:
        return _Leg(vlan, path.nodes[::-1], path.links[::-1], share)
    return _Leg(vlan, path.nodes, path.links, share)


@dataclass
class _Compilation:
    """One reservation being compiled: its inputs and the tables gathered so far."""

    request: RuleRequest
    ports: PortMap
    cookie: int
    topology: Topology
    entry: _Tables = field(default_factory=_Tables)
    forwarding: _Tables = field(default_factory=_Tables)

    def label_flows(self, leg: _Leg, there: HostPort) -> None:
        """Core rules along the leg, then the egress rule that delivers to `there`."""
        last = len(leg.nodes) - 1
        for j in range(1, last + 1):
            node = leg.nodes[j]
            match = Match(in_port=self.ports.link_port(node, leg.links[j - 1]), vlan_vid=leg.vlan)
            actions: tuple[Action, ...]
            actions = self._onto(leg, j) if j < last else (PopVlan(), Output(there.port))
            self.forwarding.flows[node].append(
                FlowRule(LABEL_PRIORITY, match, actions, self.cookie)
            )

    def first_hop(self, leg: _Leg) -> tuple[int, tuple[Action, ...]]:
        port = self.ports.link_port(leg.nodes[0], leg.links[0])
        return port, (PushVlan(leg.vlan), *self._onto(leg, 0))

    def _onto(self, leg: _Leg, hop: int) -> tuple[Action, ...]:
        """Send the leg's frames out of its `hop`-th link, in its queue when enforced."""
        node, link = leg.nodes[hop], leg.links[hop]
        port = self.ports.link_port(node, link)
        policing = self.request.policing
        if policing is None:
            return (Output(port),)
        line = self.topology.links[link].capacity
        ceiling = leg.share if policing is Policing.HARD else line
        queue = Queue(port, leg.vlan, min(leg.share, line), min(ceiling, line), line)
        if queue not in self.forwarding.queues[node]:
            self.forwarding.queues[node].append(queue)
        return (SetQueue(leg.vlan), Output(port))

    def _meter(self, switch: str, select_group_id: int) -> int | None:
        """The entry rule's meter (hard policing): the reservation's rate, a burst deep."""
        if self.request.policing is not Policing.HARD:
            return None
        rate = meter_kbps(sum(a.bandwidth for a in self.request.allocations))
        meter = Meter(meter_id_of(select_group_id), rate, max(1, int(rate * METER_BURST_SECONDS)))
        self.forwarding.meters[switch].append(meter)
        return meter.meter_id

    def ingress(
        self, legs: Sequence[_Leg], group_ids: Sequence[int], here: HostPort, there: HostPort
    ) -> None:
        """The ingress groups at `here`'s switch and the entry rules pointing at them."""
        bucket_actions = self._path_actions(legs, group_ids, here.switch)
        weights = bucket_weights([a.bandwidth for a in self.request.allocations])
        select = Group(
            group_ids[0],
            GroupKind.SELECT,
            tuple(Bucket(a, weight=w) for a, w in zip(bucket_actions, weights, strict=True)),
            self.request.selection,
        )
        self.forwarding.groups[here.switch].append(select)
        ip = Match(
            in_port=here.port, eth_type=ETH_TYPE_IPV4, ipv4_src=here.ipv4, ipv4_dst=there.ipv4
        )
        meter = self._meter(here.switch, select.group_id)
        rules = [
            FlowRule(
                ENTRY_PRIORITY, ip, (GroupAction(select.group_id),), self.cookie, meter_id=meter
            )
        ]
        if self.request.arp:
            arp = Match(
                in_port=here.port, eth_type=ETH_TYPE_ARP, arp_spa=here.ipv4, arp_tpa=there.ipv4
            )
            rules.append(FlowRule(ENTRY_PRIORITY, arp, bucket_actions[0], self.cookie))
        self.entry.flows[here.switch].extend(rules)

    def _path_actions(
        self, legs: Sequence[_Leg], group_ids: Sequence[int], switch: str
    ) -> list[tuple[Action, ...]]:
        """What sends traffic onto each path: the first hop, or its fast-failover group."""
        n_paths = len(self.request.allocations)
        actions = [self.first_hop(leg)[1] for leg in legs[:n_paths]]
        if self.request.standby is None:
            return actions
        standby_port, standby_actions = self.first_hop(legs[-1])
        for i, leg in enumerate(legs[:n_paths]):
            port, _ = self.first_hop(leg)
            buckets = (
                Bucket(actions[i], watch_port=port),
                Bucket(standby_actions, watch_port=standby_port),
            )
            group = Group(group_ids[1 + i], GroupKind.FAST_FAILOVER, buckets)
            self.forwarding.groups[switch].append(group)
            actions[i] = (GroupAction(group.group_id),)
        return actions
