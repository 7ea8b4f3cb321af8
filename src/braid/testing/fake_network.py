"""Fake switches wired as a topology: walk packets from host to host.

`FakeNetwork` builds one `FakeSwitch` per switch of a `PortMap`, joins the
ports of each link's two ends, and hangs the hosts off their ports. `send`
injects a packet at a host and follows every copy through the switches until
it reaches a host or is dropped, recording the links it crossed; `send_out`
starts a packet on its way out of a switch port instead, as an OpenFlow
packet-out does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.rules.model import PortMap, RuleSet
from braid.testing.fake_switch import FakeSwitch, Packet

__all__ = ["Delivery", "FakeNetwork", "ForwardingLoopError"]

MAX_HOPS: Final = 64


_Hops = tuple[int | None, ...]


class ForwardingLoopError(Exception):
    """A packet crossed more links than any simple path has."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """Where one copy of a packet ended: the host it reached, the links and labels on the way,
    and the queue it crossed each link in (`None`: best effort)."""

    host: str
    links: tuple[str, ...]
    vlans: tuple[int | None, ...]
    packet: Packet
    queues: tuple[int | None, ...] = ()


class FakeNetwork:
    """Fake switches joined by the topology's links, with hosts on their ports."""

    def __init__(self, topology: Topology, ports: PortMap) -> None:
        self.switches = {s: FakeSwitch(s, p.dpid) for s, p in ports.switches.items()}
        self._peer: dict[tuple[str, int], tuple[str, int, str]] = {}
        self._link_ends: dict[str, list[tuple[str, int]]] = {}
        self._hosts: dict[tuple[str, int], str] = {}
        self.ports = ports
        for link in topology.links.values():
            if link.a not in self.switches or link.b not in self.switches:
                continue
            end_a = (link.a, ports.link_port(link.a, link.id))
            end_b = (link.b, ports.link_port(link.b, link.id))
            self._peer[end_a] = (*end_b, link.id)
            self._peer[end_b] = (*end_a, link.id)
            self._link_ends[link.id] = [end_a, end_b]
        for host in ports.hosts.values():
            self._hosts[(host.switch, host.port)] = host.host

    def apply(self, rule_set: RuleSet) -> None:
        self._switch(rule_set.switch).apply(rule_set)

    def remove(self, rule_set: RuleSet) -> None:
        self._switch(rule_set.switch).remove(rule_set)

    def apply_all(self, rule_sets: Iterable[RuleSet]) -> None:
        for rule_set in rule_sets:
            self.apply(rule_set)

    def dump(self) -> dict[str, RuleSet]:
        return {name: switch.dump() for name, switch in sorted(self.switches.items())}

    def set_link(self, link: str, *, up: bool) -> None:
        """Bring both ends of `link` down (or up again): fast-failover watches this."""
        ends = self._link_ends.get(link)
        if ends is None:
            raise InputError("link", f"unknown link {link!r}")
        for switch, port in ends:
            if up:
                self.switches[switch].down_ports.discard(port)
            else:
                self.switches[switch].down_ports.add(port)

    def send(self, host: str, packet: Packet) -> list[Delivery]:
        """Inject `packet` (its `in_port` is ignored) at `host`; every host copy that arrives."""
        attach = self.ports.host(host)
        return self._walk(attach.switch, dataclasses.replace(packet, in_port=attach.port))

    def send_out(self, switch: str, port: int, packet: Packet) -> list[Delivery]:
        """`packet` sent out of `switch`'s `port` as is; every host copy that arrives."""
        if port in self._switch(switch).down_ports:
            return []
        return self._walk(switch, packet, [(port, packet)])

    def _walk(
        self, switch: str, packet: Packet, first: list[tuple[int, Packet]] | None = None
    ) -> list[Delivery]:
        delivered: list[Delivery] = []
        pending: list[tuple[str, Packet, tuple[str, ...], _Hops, _Hops]]
        pending = [(switch, packet, (), (), ())]
        while pending:
            here, pkt, links, vlans, queues = pending.pop()
            sent = first if first is not None else self._switch(here).process(pkt)
            first = None
            for port, out in sent:
                host = self._hosts.get((here, port))
                if host is not None:
                    delivered.append(Delivery(host, links, vlans, out, queues))
                    continue
                peer = self._peer.get((here, port))
                if peer is None:
                    continue  # an unwired port: the packet is lost
                if len(links) >= MAX_HOPS:
                    raise ForwardingLoopError(f"packet still travelling after {MAX_HOPS} links")
                there, in_port, link = peer
                arriving = dataclasses.replace(out, in_port=in_port, queue=None)
                hop = ((*links, link), (*vlans, out.vlan), (*queues, out.queue))
                pending.append((there, arriving, *hop))
        return delivered

    def _switch(self, name: str) -> FakeSwitch:
        found = self.switches.get(name)
        if found is None:
            raise InputError("switch", f"unknown switch {name!r}")
        return found
