"""An in-memory OpenFlow 1.3 switch and network that evaluate rule sets on packets.

Tests ask "where does a packet with this header go?" instead of checking
message bytes. The switch follows OpenFlow's semantics where braid relies on
them: the highest-priority matching rule wins (two overlapping rules at the
same priority are an error here, since a real switch would pick arbitrarily),
actions apply in order, a select group picks a bucket per flow with the
symmetric weighted hash (or per packet by smooth weighted round-robin for
`Selection.PACKET`), a fast-failover group takes its first bucket whose
watched port is up, and output to the input port is dropped.

Meters and queues are held like the tables are: a flow may only name a
meter the switch holds (Open vSwitch refuses it otherwise), deleting a meter
deletes the flows that use it (OpenFlow 1.3), and a frame sent out of a port
lands in the queue whose id is its VLAN, as braid's queues classify them on
the wire (`Packet.queue`; `None` is best effort). `meter_hits` counts the
packets each meter saw; `flow_counts` the packets and bytes (`Packet.size`,
and 4 more for a VLAN tag) each flow matched, by flow key, as a switch's
flow statistics (`n_packets`, `n_bytes`) do. Meters drop nothing here: the
fake has no clock.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections import Counter
from dataclasses import dataclass
from typing import Final

from braid.core.delivery.samples import VLAN_TAG_BYTES
from braid.core.rules import flow_hash
from braid.core.rules.model import (
    ETH_TYPE_ARP,
    ETH_TYPE_IPV4,
    IN_PORT,
    UNTAGGED,
    Action,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    Match,
    Meter,
    Output,
    PopVlan,
    PushVlan,
    Queue,
    RuleSet,
    Selection,
    SetVlan,
)

__all__ = ["AmbiguousMatchError", "FakeSwitch", "Packet", "UnknownMeterError"]

MAX_GROUP_DEPTH: Final = 8


class AmbiguousMatchError(Exception):
    """Two rules of equal priority both match a packet."""


class UnknownMeterError(Exception):
    """A flow names a meter the switch does not hold."""


@dataclass(frozen=True, slots=True)
class Packet:
    """The header fields braid's rules look at; `vlan=None` means untagged."""

    in_port: int
    eth_type: int = ETH_TYPE_IPV4
    eth_src: str | None = None
    eth_dst: str | None = None
    vlan: int | None = None
    ipv4_src: str | None = None
    ipv4_dst: str | None = None
    ip_proto: int | None = None
    tp_src: int | None = None
    tp_dst: int | None = None
    arp_spa: str | None = None
    arp_tpa: str | None = None
    queue: int | None = None
    size: int = 1000  # bytes on the wire without a VLAN tag (a tag adds 4)

    def five_tuple(self) -> flow_hash.FiveTuple:
        """The flow the packet belongs to (ARP: its two protocol addresses)."""
        if self.eth_type == ETH_TYPE_ARP:
            return flow_hash.FiveTuple(self.arp_spa or "0.0.0.0", self.arp_tpa or "0.0.0.0", 0)
        return flow_hash.FiveTuple(
            self.ipv4_src or "0.0.0.0",
            self.ipv4_dst or "0.0.0.0",
            self.ip_proto or 0,
            self.tp_src or 0,
            self.tp_dst or 0,
        )


def _address_in(address: str | None, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if address is None:
        return False
    return ipaddress.IPv4Address(address) in ipaddress.IPv4Network(wanted)


def matches(match: Match, packet: Packet) -> bool:
    """Whether `packet` satisfies every field `match` sets."""
    if match.vlan_vid is not None and (packet.vlan or UNTAGGED) != match.vlan_vid:
        return False
    exact = (
        (match.in_port, packet.in_port),
        (match.eth_type, packet.eth_type),
        (match.eth_src, packet.eth_src),
        (match.eth_dst, packet.eth_dst),
        (match.ip_proto, packet.ip_proto),
        (match.tp_src, packet.tp_src),
        (match.tp_dst, packet.tp_dst),
    )
    if any(want is not None and want != have for want, have in exact):
        return False
    prefixes = (
        (packet.ipv4_src, match.ipv4_src),
        (packet.ipv4_dst, match.ipv4_dst),
        (packet.arp_spa, match.arp_spa),
        (packet.arp_tpa, match.arp_tpa),
    )
    return all(_address_in(have, want) for have, want in prefixes)


class FakeSwitch:
    """One switch's flow table (table 0) and group table."""

    def __init__(self, name: str, dpid: int) -> None:
        self.name = name
        self.dpid = dpid
        self.flows: dict[tuple[int, int, Match], FlowRule] = {}
        self.groups: dict[int, Group] = {}
        self.meters: dict[int, Meter] = {}
        self.queues: dict[tuple[int, int], Queue] = {}
        self.down_ports: set[int] = set()
        self.meter_hits: Counter[int] = Counter()
        self.flow_counts: dict[tuple[int, int, Match], tuple[int, int]] = {}
        self._round_robin: dict[int, list[int]] = {}

    def apply(self, rule_set: RuleSet) -> None:
        """Add queues, meters, groups, then flows; the same key or id replaces."""
        for queue in rule_set.queues:
            self.queues[queue.key] = queue
        for meter in rule_set.meters:
            self.meters[meter.meter_id] = meter
        for group in rule_set.groups:
            self.groups[group.group_id] = group
            self._round_robin.pop(group.group_id, None)
        for flow in rule_set.flows:
            if flow.meter_id is not None and flow.meter_id not in self.meters:
                raise UnknownMeterError(f"{self.name}: flow names meter {flow.meter_id}")
            self.flows[flow.key] = flow

    def remove(self, rule_set: RuleSet) -> None:
        """Delete exactly these flows (by key), groups and meters (by id) and queues."""
        for flow in rule_set.flows:
            self.flows.pop(flow.key, None)
            self.flow_counts.pop(flow.key, None)
        for group in rule_set.groups:
            self.groups.pop(group.group_id, None)
        for meter in rule_set.meters:
            if self.meters.pop(meter.meter_id, None) is not None:
                users = [k for k, f in self.flows.items() if f.meter_id == meter.meter_id]
                for key in users:
                    del self.flows[key]
        for queue in rule_set.queues:
            self.queues.pop(queue.key, None)

    def dump(self) -> RuleSet:
        return RuleSet.of(
            self.name,
            self.dpid,
            self.flows.values(),
            self.groups.values(),
            self.meters.values(),
            self.queues.values(),
        )

    def lookup(self, packet: Packet) -> FlowRule | None:
        """The rule that handles `packet`, if any."""
        hits = [f for f in self.flows.values() if f.table_id == 0 and matches(f.match, packet)]
        if not hits:
            return None
        top = max(f.priority for f in hits)
        best = [f for f in hits if f.priority == top]
        if len(best) > 1:
            raise AmbiguousMatchError(f"{self.name}: {len(best)} rules at priority {top} match")
        return best[0]

    def process(self, packet: Packet) -> list[tuple[int, Packet]]:
        """(port, packet as sent) for every copy the switch sends out; empty = dropped."""
        rule = self.lookup(packet)
        if rule is None:
            return []
        if rule.meter_id is not None:
            self.meter_hits[rule.meter_id] += 1
        packets, size = self.flow_counts.get(rule.key, (0, 0))
        on_wire = packet.size + (0 if packet.vlan is None else VLAN_TAG_BYTES)
        self.flow_counts[rule.key] = (packets + 1, size + on_wire)
        return self._run(rule.actions, packet, 0)

    def _run(
        self, actions: tuple[Action, ...], packet: Packet, depth: int
    ) -> list[tuple[int, Packet]]:
        sent: list[tuple[int, Packet]] = []
        for action in actions:
            if isinstance(action, Output):
                sent.extend(self._output(action.port, packet))
            elif isinstance(action, PushVlan | SetVlan):
                packet = dataclasses.replace(packet, vlan=action.vid)
            elif isinstance(action, PopVlan):
                packet = dataclasses.replace(packet, vlan=None)
            elif isinstance(action, GroupAction):
                sent.extend(self._group(action.group_id, packet, depth + 1))
        return sent

    def _output(self, port: int, packet: Packet) -> list[tuple[int, Packet]]:
        if port == IN_PORT:
            port = packet.in_port
        elif port == packet.in_port:
            return []  # OpenFlow never sends a packet back where it came from unasked
        if port in self.down_ports:
            return []
        queue = None if packet.vlan is None else self.queues.get((port, packet.vlan))
        return [
            (port, dataclasses.replace(packet, queue=None if queue is None else queue.queue_id))
        ]

    def _group(self, group_id: int, packet: Packet, depth: int) -> list[tuple[int, Packet]]:
        group = self.groups.get(group_id)
        if group is None or depth > MAX_GROUP_DEPTH:
            return []
        if group.kind is GroupKind.ALL:
            return [s for b in group.buckets for s in self._run(b.actions, packet, depth)]
        if group.kind is GroupKind.FAST_FAILOVER:
            for bucket in group.buckets:
                if bucket.watch_port not in self.down_ports:
                    return self._run(bucket.actions, packet, depth)
            return []
        if group.kind is GroupKind.INDIRECT:
            return self._run(group.buckets[0].actions, packet, depth)
        index = self._select(group, packet)
        return self._run(group.buckets[index].actions, packet, depth)

    def _select(self, group: Group, packet: Packet) -> int:
        weights = [b.weight for b in group.buckets]
        if group.selection is Selection.FLOW:
            return flow_hash.choose(packet.five_tuple(), weights)
        # Smooth weighted round-robin: exact proportions over every sum(weights) packets.
        credit = self._round_robin.setdefault(group.group_id, [0] * len(weights))
        for i, weight in enumerate(weights):
            credit[i] += weight
        index = max(range(len(weights)), key=lambda i: (credit[i], -i))
        credit[index] -= sum(weights)
        return index
