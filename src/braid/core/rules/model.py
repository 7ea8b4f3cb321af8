"""Abstract OpenFlow 1.3 rule sets: what braid wants a switch's tables to hold.

The compiler (`braid.core.rules.compiler`) turns an allocation into these
objects, the fake switch (`braid.testing.fake_switch`) evaluates them on
packet headers, and the southbound drivers (`braid.adapters.southbound`) write
them to real switches and read them back. Everything here is a frozen value,
and `RuleSet.of` orders entries canonically, so a rule set read back from a
switch compares equal to the one applied exactly when the switch holds it.

Conventions
- Ports are OpenFlow port numbers (`int`), special ports as the constants below.
- `Match` fields left as `None` are wildcards. `vlan_vid=UNTAGGED` matches
  frames without an 802.1Q tag; any other `vlan_vid` is a VLAN id 1..4094.
- Addresses are kept in canonical text form ("10.0.0.1", "10.0.0.0/24",
  "00:00:00:00:00:01") so that values read back from a switch compare equal.
- The wiring the compiler needs (`PortMap`, `SwitchPorts`, `HostPort`) is
  defined in `braid.core.rules.wiring` and re-exported here.
- Flows belonging to one reservation share a `cookie`; braid's cookies carry
  `BRAID_COOKIE_TAG` in their top 16 bits so that drivers only ever touch
  braid's own flows, and braid's group ids lie in `BRAID_GROUP_IDS`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, TypeVar

from braid.core.errors import InputError
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.rules.addresses import canonical_ipv4, canonical_mac
from braid.core.rules.enforcement import Meter, Policing, Queue
from braid.core.rules.wiring import HostPort, PortMap, SwitchPorts

__all__ = [
    "BRAID_COOKIE_MASK",
    "BRAID_COOKIE_TAG",
    "BRAID_GROUP_IDS",
    "ETH_TYPE_ARP",
    "ETH_TYPE_IPV4",
    "IN_PORT",
    "UNTAGGED",
    "VLAN_IDS",
    "Action",
    "Bucket",
    "FlowRule",
    "Group",
    "GroupAction",
    "GroupKind",
    "HostPort",
    "Match",
    "Meter",
    "Output",
    "Policing",
    "PopVlan",
    "PortMap",
    "PushVlan",
    "Queue",
    "RulePlan",
    "RuleRequest",
    "RuleSet",
    "Selection",
    "SetQueue",
    "SetVlan",
    "Step",
    "StepKind",
    "SwitchPorts",
    "merge_rule_sets",
]

UNTAGGED: Final = 0
"""`Match.vlan_vid` value for frames without a VLAN tag (OpenFlow's OFPVID_NONE)."""

VLAN_IDS: Final = range(1, 4095)
"""The VLAN ids a path label may take."""

IN_PORT: Final = 0xFFFFFFF8
"""OpenFlow's OFPP_IN_PORT: send a packet back out of the port it came in on."""

BRAID_COOKIE_TAG: Final = 0xB7A1 << 48
BRAID_COOKIE_MASK: Final = 0xFFFF << 48
BRAID_GROUP_IDS: Final = range(0x0B7A_0000, 0x0B7B_0000)
"""Group ids braid allocates from; groups outside this range are left alone."""

ETH_TYPE_IPV4: Final = 0x0800
ETH_TYPE_ARP: Final = 0x0806


def _check_range(value: int | None, field_name: str, low: int, high: int) -> None:
    if value is not None and not low <= value <= high:
        raise InputError(field_name, f"must lie in {low}..{high}, got {value}")


@dataclass(frozen=True, slots=True)
class Match:
    """Header fields a flow rule matches; `None` means any value."""

    in_port: int | None = None
    eth_type: int | None = None
    eth_src: str | None = None
    eth_dst: str | None = None
    vlan_vid: int | None = None
    ip_proto: int | None = None
    ipv4_src: str | None = None
    ipv4_dst: str | None = None
    tp_src: int | None = None
    tp_dst: int | None = None
    arp_spa: str | None = None
    arp_tpa: str | None = None

    def __post_init__(self) -> None:
        _check_range(self.vlan_vid, "match.vlan_vid", 0, 4094)
        _check_range(self.tp_src, "match.tp_src", 0, 65535)
        _check_range(self.tp_dst, "match.tp_dst", 0, 65535)
        _check_range(self.ip_proto, "match.ip_proto", 0, 255)
        for name in ("ipv4_src", "ipv4_dst", "arp_spa", "arp_tpa"):
            object.__setattr__(self, name, canonical_ipv4(getattr(self, name), f"match.{name}"))
        for name in ("eth_src", "eth_dst"):
            object.__setattr__(self, name, canonical_mac(getattr(self, name), f"match.{name}"))
        needs_ip = (self.ip_proto, self.ipv4_src, self.ipv4_dst)
        if any(v is not None for v in needs_ip) and self.eth_type != ETH_TYPE_IPV4:
            raise InputError("match.eth_type", "IPv4 fields need eth_type 0x0800")
        if (self.tp_src, self.tp_dst) != (None, None) and self.ip_proto not in (6, 17):
            raise InputError("match.ip_proto", "transport ports need ip_proto 6 or 17")
        if (self.arp_spa, self.arp_tpa) != (None, None) and self.eth_type != ETH_TYPE_ARP:
            raise InputError("match.eth_type", "ARP fields need eth_type 0x0806")


@dataclass(frozen=True, slots=True)
class Output:
    """Send the packet out of `port`."""

    port: int


@dataclass(frozen=True, slots=True)
class PushVlan:
    """Push an 802.1Q tag (TPID 0x8100) carrying VLAN id `vid`."""

    vid: int

    def __post_init__(self) -> None:
        _check_range(self.vid, "push_vlan.vid", 1, 4094)


@dataclass(frozen=True, slots=True)
class SetVlan:
    """Rewrite the VLAN id of an already tagged packet (label swap at a border)."""

    vid: int

    def __post_init__(self) -> None:
        _check_range(self.vid, "set_vlan.vid", 1, 4094)


@dataclass(frozen=True, slots=True)
class PopVlan:
    """Remove the outermost 802.1Q tag."""


@dataclass(frozen=True, slots=True)
class GroupAction:
    """Hand the packet to group `group_id`."""

    group_id: int


@dataclass(frozen=True, slots=True)
class SetQueue:
    """Put the packet in queue `queue_id` of the port it leaves by."""

    queue_id: int


Action = Output | PushVlan | SetVlan | PopVlan | GroupAction | SetQueue
"""One entry of an OpenFlow action list; lists apply in order."""


@dataclass(frozen=True, slots=True)
class FlowRule:
    """One flow table entry; an empty action list drops. `meter_id` meters it first."""

    priority: int
    match: Match
    actions: tuple[Action, ...]
    cookie: int = 0
    table_id: int = 0
    meter_id: int | None = None

    def __post_init__(self) -> None:
        _check_range(self.priority, "flow.priority", 0, 65535)
        _check_range(self.table_id, "flow.table_id", 0, 254)

    @property
    def key(self) -> tuple[int, int, Match]:
        """What identifies the entry in a switch: adding a rule with the same key replaces it."""
        return (self.table_id, self.priority, self.match)


class GroupKind(enum.StrEnum):
    SELECT = "select"
    FAST_FAILOVER = "ff"
    ALL = "all"
    INDIRECT = "indirect"


class Selection(enum.StrEnum):
    """How a select group spreads traffic over its buckets.

    FLOW: per flow, by the symmetric weighted 5-tuple hash, as stock switches
    hash (`braid.core.rules.flow_hash`); both directions of a TCP connection
    land on the same path. PACKET: per packet, weighted round-robin, which
    stock Open vSwitch cannot do; it needs braid's own edge element and is
    reserved for it (drivers for stock switches refuse it).
    """

    FLOW = "flow"
    PACKET = "packet"


@dataclass(frozen=True, slots=True)
class Bucket:
    """One way through a group: its actions, its weight (select), its watched port (ff)."""

    actions: tuple[Action, ...]
    weight: int = 1
    watch_port: int | None = None

    def __post_init__(self) -> None:
        _check_range(self.weight, "bucket.weight", 0, 65535)


@dataclass(frozen=True, slots=True)
class Group:
    """An OpenFlow group: select (weighted buckets) or fast-failover (first live bucket)."""

    group_id: int
    kind: GroupKind
    buckets: tuple[Bucket, ...]
    selection: Selection = Selection.FLOW

    def __post_init__(self) -> None:
        _check_range(self.group_id, "group.group_id", 0, 0xFFFFFF00)
        if not self.buckets:
            raise InputError("group.buckets", f"group {self.group_id} has no bucket")
        if self.kind is GroupKind.FAST_FAILOVER:
            for bucket in self.buckets:
                if bucket.watch_port is None:
                    raise InputError("bucket.watch_port", "fast-failover buckets need one")


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Flows, groups, meters and port queues for one switch, each in canonical order.

    `switch` is the topology node id; `dpid` the OpenFlow datapath id by which
    a controller knows it. Build with `RuleSet.of(...)` to get the canonical
    order (so equal contents compare equal): flows by key, groups and meters
    by id, queues by (port, queue id).
    """

    switch: str
    dpid: int
    flows: tuple[FlowRule, ...] = ()
    groups: tuple[Group, ...] = ()
    meters: tuple[Meter, ...] = ()
    queues: tuple[Queue, ...] = ()

    @staticmethod
    def of(
        switch: str,
        dpid: int,
        flows: Iterable[FlowRule] = (),
        groups: Iterable[Group] = (),
        meters: Iterable[Meter] = (),
        queues: Iterable[Queue] = (),
    ) -> RuleSet:
        """A canonical rule set; duplicate flow keys, group or meter ids, queues are an error."""
        by_key: dict[tuple[int, int, Match], FlowRule] = {}
        for flow in flows:
            if flow.key in by_key and by_key[flow.key] != flow:
                raise InputError(f"{switch}.flows", f"two different rules share {flow.key}")
            by_key[flow.key] = flow
        by_id: dict[int, Group] = {}
        for group in groups:
            if group.group_id in by_id and by_id[group.group_id] != group:
                raise InputError(f"{switch}.groups", f"two groups share id {group.group_id}")
            by_id[group.group_id] = group
        ordered = tuple(sorted(by_key.values(), key=_flow_order))
        by_meter = _unique(meters, lambda m: m.meter_id, f"{switch}.meters", "meter id")
        by_queue = _unique(queues, lambda q: q.key, f"{switch}.queues", "port and queue id")
        return RuleSet(
            switch,
            dpid,
            ordered,
            tuple(by_id[g] for g in sorted(by_id)),
            tuple(by_meter[m] for m in sorted(by_meter)),
            tuple(by_queue[q] for q in sorted(by_queue)),
        )

    @property
    def empty(self) -> bool:
        return not (self.flows or self.groups or self.meters or self.queues)

    def without(self, other: RuleSet) -> RuleSet:
        """This rule set minus the flows (by key), groups and meters (by id) and queues
        (by port and id) that `other` holds."""
        keys = {f.key for f in other.flows}
        ids = {g.group_id for g in other.groups}
        meter_ids = {m.meter_id for m in other.meters}
        queue_keys = {q.key for q in other.queues}
        return RuleSet(
            self.switch,
            self.dpid,
            tuple(f for f in self.flows if f.key not in keys),
            tuple(g for g in self.groups if g.group_id not in ids),
            tuple(m for m in self.meters if m.meter_id not in meter_ids),
            tuple(q for q in self.queues if q.key not in queue_keys),
        )


_K = TypeVar("_K")
_V = TypeVar("_V")


def _unique(items: Iterable[_V], key: Callable[[_V], _K], where: str, what: str) -> dict[_K, _V]:
    found: dict[_K, _V] = {}
    for item in items:
        k = key(item)
        if k in found and found[k] != item:
            raise InputError(where, f"two different entries share {what} {k}")
        found[k] = item
    return found


def _flow_order(flow: FlowRule) -> tuple[int, int, str]:
    return (flow.table_id, -flow.priority, repr(flow.match))


def merge_rule_sets(rule_sets: Iterable[RuleSet]) -> dict[str, RuleSet]:
    """Combine rule sets per switch (e.g. every reservation's): the desired tables."""
    flows: dict[str, list[FlowRule]] = {}
    groups: dict[str, list[Group]] = {}
    meters: dict[str, list[Meter]] = {}
    queues: dict[str, list[Queue]] = {}
    dpids: dict[str, int] = {}
    for rule_set in rule_sets:
        dpids.setdefault(rule_set.switch, rule_set.dpid)
        flows.setdefault(rule_set.switch, []).extend(rule_set.flows)
        groups.setdefault(rule_set.switch, []).extend(rule_set.groups)
        meters.setdefault(rule_set.switch, []).extend(rule_set.meters)
        queues.setdefault(rule_set.switch, []).extend(rule_set.queues)
    return {
        s: RuleSet.of(s, dpids[s], flows[s], groups[s], meters[s], queues[s]) for s in sorted(dpids)
    }


# --- compiler input and output ----------------------------------------------


@dataclass(frozen=True, slots=True)
class RuleRequest:
    """One reservation to compile: its paths with shares, its two hosts, its standby.

    `allocations` are the booking's paths (from `src_host`'s switch to
    `dst_host`'s) with their bandwidth; the shares weigh the select group's
    buckets. `standby`, when given, is protected against: every path's first
    hop sits in a fast-failover group whose second bucket takes the standby.
    Both directions are compiled (a TCP flow needs its ACKs); `arp=True` also
    carries ARP between the two hosts over the first path. With `policing`
    the rates are held on the wire (`braid.core.rules.enforcement`): a meter
    on each entry rule and a queue per path share on every port it leaves by;
    without, the rules only route.
    """

    reservation_id: str
    allocations: tuple[Allocation, ...]
    src_host: str
    dst_host: str
    standby: Path | None = None
    selection: Selection = Selection.FLOW
    arp: bool = True
    policing: Policing | None = None


@dataclass(frozen=True, slots=True)
class RulePlan:
    """A compiled reservation: per-switch rules split into the two phases of installation.

    `forwarding` (groups, core and egress rules) can sit in the switches
    without effect until `entry` (the ingress rules matching the hosts'
    traffic) points traffic at it; installing forwarding first and entry last
    is what makes changes hitless. `vlans[i]` labels `allocations[i]`'s path;
    `standby_vlan` labels the standby path. Removing the reservation means
    removing exactly `rule_sets()`.
    """

    reservation_id: str
    cookie: int
    vlans: tuple[int, ...]
    standby_vlan: int | None
    group_ids: tuple[int, ...]
    entry: tuple[RuleSet, ...]
    forwarding: tuple[RuleSet, ...]

    def rule_sets(self) -> tuple[RuleSet, ...]:
        """Everything this reservation puts in the switches, one rule set per switch."""
        return tuple(merge_rule_sets((*self.forwarding, *self.entry)).values())

    @property
    def labels(self) -> tuple[int, ...]:
        """Every VLAN id the plan uses (paths, then standby)."""
        extra = () if self.standby_vlan is None else (self.standby_vlan,)
        return (*self.vlans, *extra)


class StepKind(enum.StrEnum):
    APPLY = "apply"
    REMOVE = "remove"


@dataclass(frozen=True, slots=True)
class Step:
    """One driver call of an ordered change: apply or remove `rule_set`."""

    kind: StepKind
    rule_set: RuleSet
