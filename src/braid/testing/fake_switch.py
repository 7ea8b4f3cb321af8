"""An in-memory OpenFlow 1.3 switch and network that evaluate rule sets on packets.

Tests ask "where does a packet with this header go?" instead of checking
message bytes. The switch follows OpenFlow's semantics where braid relies on
them: the highest-priority matching rule wins (two overlapping rules at the
same priority are an error here, since a real switch would pick arbitrarily),
actions apply in order, a select group picks a bucket per flow with the
symmetric weighted hash (or per packet by smooth weighted round-robin for
`Selection.PACKET`), a fast-failover group takes its first bucket whose
watched port is up, and output to the input port is dropped.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass
from typing import Final

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
    Output,
    PopVlan,
    PushVlan,
    RuleSet,
    Selection,
    SetVlan,
)

__all__ = ["AmbiguousMatchError", "FakeSwitch", "Packet"]

MAX_GROUP_DEPTH: Final = 8


class AmbiguousMatchError(Exception):
    """Two rules of equal priority both match a packet."""


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
        self.down_ports: set[int] = set()
        self._round_robin: dict[int, list[int]] = {}

    def apply(self, rule_set: RuleSet) -> None:
        """Add groups then flows; same key or group id replaces."""
        for group in rule_set.groups:
            self.groups[group.group_id] = group
            self._round_robin.pop(group.group_id, None)
        for flow in rule_set.flows:
            self.flows[flow.key] = flow

    def remove(self, rule_set: RuleSet) -> None:
        """Delete exactly these flows (by key) and groups (by id)."""
        for flow in rule_set.flows:
            self.flows.pop(flow.key, None)
        for group in rule_set.groups:
            self.groups.pop(group.group_id, None)

    def dump(self) -> RuleSet:
        return RuleSet.of(self.name, self.dpid, self.flows.values(), self.groups.values())

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
        return [] if port in self.down_ports else [(port, packet)]

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
