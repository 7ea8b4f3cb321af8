"""Circuit check: probe each path of an installed reservation and say where probes got to.

Kilda's "flow ping", done with the counters every OpenFlow rule keeps. For
each path (and the standby) and each direction, `circuit_probes` says what
to inject: a frame between the reservation's hosts (`probe_frame`), sent by
the ingress switch already labelled with the path's VLAN out of the path's
first port, `count` times. Every later hop of the path has one label rule
matching (in_port, VLAN); `judge` compares those rules' packet counters
read before and after: a hop whose counter grew by `count` passed the
probes, and the first that did not is where they were lost, between it and
the hop before. The egress rule passing them proves delivery to the host's
port.

The hops are read back from the plan itself (walking its label rules from
the egress switch towards the ingress over the wiring's links), so the check
needs nothing but what the provisioner holds: the plan and the `PortMap`.

Counters only grow, so traffic of the reservation's own running alongside
the probes can hide a partial loss but never a missing rule or a dead link
(those show as no growth, or no rule, at the hop).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError
from braid.core.provisioning.probe_frame import probe_frame
from braid.core.rules.model import (
    ETH_TYPE_IPV4,
    FlowRule,
    HostPort,
    Output,
    PopVlan,
    PortMap,
    RulePlan,
)

__all__ = [
    "PROBE_COUNT",
    "CheckResult",
    "CircuitProbes",
    "CounterKey",
    "Hop",
    "PathCheck",
    "Probe",
    "circuit_probes",
    "judge",
]

PROBE_COUNT: Final = 20

CounterKey = tuple[str, int, int]
"""A label rule's identity for counting: (switch, in_port, VLAN)."""


@dataclass(frozen=True, slots=True)
class Hop:
    """The label rule at `switch` matching (`in_port`, `vlan`), reached over `link` from
    `previous`."""

    switch: str
    in_port: int
    vlan: int
    link: str
    previous: str

    @property
    def key(self) -> CounterKey:
        return (self.switch, self.in_port, self.vlan)


@dataclass(frozen=True, slots=True)
class Probe:
    """What to inject for one path in one direction, and the hops it should pass."""

    path: int  # index in `RulePlan.labels`
    standby: bool
    vlan: int
    src: HostPort
    dst: HostPort
    out_port: int  # the ingress switch's port onto the path
    hops: tuple[Hop, ...]  # in the order the probes travel; the last delivers
    frame: bytes

    @property
    def switch(self) -> str:
        """The ingress switch, where the probes are injected."""
        return self.src.switch

    @property
    def name(self) -> str:
        which = "standby" if self.standby else f"path {self.path}"
        return f"{which} (VLAN {self.vlan}) {self.src.host}→{self.dst.host}"


@dataclass(frozen=True, slots=True)
class CircuitProbes:
    """Every probe of one reservation: `count` frames each, counted by its `cookie`'s rules."""

    reservation_id: str
    cookie: int
    count: int
    probes: tuple[Probe, ...]

    def switches(self) -> tuple[str, ...]:
        """The switches whose counters the check reads."""
        return tuple(sorted({h.switch for p in self.probes for h in p.hops}))


@dataclass(frozen=True, slots=True)
class PathCheck:
    """How far one probe's frames got: the hops they passed, and where they were lost."""

    probe: Probe
    passed: int  # hops whose counters grew by the probes sent
    arrived: int  # frames counted at the first hop that fell short (= sent if none did)
    lost_at: Hop | None = None
    missing_rule: bool = False  # the hop held no label rule at all

    @property
    def delivered(self) -> bool:
        return self.lost_at is None

    def text(self, sent: int) -> str:
        hop = self.lost_at
        if hop is None:
            return f"{self.probe.name}: {sent} of {sent} probes delivered"
        if self.missing_rule:
            why = f"no rule for in_port {hop.in_port}, VLAN {hop.vlan}"
            return f"{self.probe.name}: lost at {hop.switch} ({why})"
        where = f"lost between {hop.previous} and {hop.switch} (link {hop.link})"
        return f"{self.probe.name}: {sent - self.arrived} of {sent} probes {where}"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A reservation's circuit check: `verified` when every path delivered both ways."""

    reservation_id: str
    sent: int
    paths: tuple[PathCheck, ...]

    @property
    def verified(self) -> bool:
        return bool(self.paths) and all(p.delivered for p in self.paths)

    @property
    def failures(self) -> tuple[PathCheck, ...]:
        return tuple(p for p in self.paths if not p.delivered)

    def text(self) -> str:
        """One line: how many paths verified, or which hop lost each failing path's probes."""
        if not self.paths:
            return "nothing to probe"
        if self.verified:
            return f"{len(self.paths)} path directions verified, {self.sent} probes each"
        return "; ".join(p.text(self.sent) for p in self.failures)


def circuit_probes(plan: RulePlan, ports: PortMap, count: int = PROBE_COUNT) -> CircuitProbes:
    """The probes checking every path of `plan` both ways, `count` frames each."""
    if count <= 0:
        raise InputError("probes.count", f"must be positive, got {count}")
    flows = [(rs.switch, f) for rs in plan.rule_sets() for f in rs.flows]
    peers = _peers(ports)
    probes = []
    for direction, (src, dst) in enumerate(_directions(plan, ports)):
        for index, vlan in enumerate(plan.labels):
            out_port, hops = _walk_back(flows, peers, vlan, src, dst)
            frame = probe_frame(src.ipv4, dst.ipv4, 2 * index + direction)
            standby = index >= len(plan.vlans)
            probes.append(Probe(index, standby, vlan, src, dst, out_port, hops, frame))
    return CircuitProbes(plan.reservation_id, plan.cookie, count, tuple(probes))


def judge(
    probes: CircuitProbes, before: Mapping[CounterKey, int], after: Mapping[CounterKey, int]
) -> CheckResult:
    """Each probe's progress from the label rules' counters read before and after sending.

    A rule absent `before` counts from 0 (it may have been put back since); one
    absent `after` is a missing rule: its hop lost the probes.
    """
    checks = []
    for probe in probes.probes:
        check = PathCheck(probe, len(probe.hops), probes.count)
        for passed, hop in enumerate(probe.hops):
            if hop.key not in after:
                check = PathCheck(probe, passed, 0, hop, missing_rule=True)
                break
            grew = after[hop.key] - before.get(hop.key, 0)
            if grew < probes.count:
                check = PathCheck(probe, passed, max(0, grew), hop)
                break
        checks.append(check)
    return CheckResult(probes.reservation_id, probes.count, tuple(checks))


# --- reading the paths back from the plan ---------------------------------------

_Peers = Mapping[tuple[str, int], tuple[str, int, str]]


def _peers(ports: PortMap) -> dict[tuple[str, int], tuple[str, int, str]]:
    """(switch, port) -> (switch, port, link) at the link's other end."""
    ends: dict[str, list[tuple[str, int]]] = {}
    for switch in sorted(ports.switches):
        for link, port in ports.switches[switch].link_ports.items():
            ends.setdefault(link, []).append((switch, port))
    peers: dict[tuple[str, int], tuple[str, int, str]] = {}
    for link, both in ends.items():
        if len(both) == 2:
            (a, pa), (b, pb) = both
            peers[(a, pa)], peers[(b, pb)] = (b, pb, link), (a, pa, link)
    return peers


def _directions(plan: RulePlan, ports: PortMap) -> Iterator[tuple[HostPort, HostPort]]:
    """(source host, destination host) of each IPv4 entry rule, in the plan's order."""
    at_port = {(h.switch, h.port): h for h in ports.hosts.values()}
    by_ip: dict[str, list[HostPort]] = {}
    for host in ports.hosts.values():
        by_ip.setdefault(host.ipv4, []).append(host)
    for rule_set in plan.entry:
        for flow in rule_set.flows:
            m = flow.match
            if m.eth_type != ETH_TYPE_IPV4 or m.in_port is None or m.ipv4_dst is None:
                continue
            src = at_port.get((rule_set.switch, m.in_port))
            dst = [h for h in by_ip.get(m.ipv4_dst, []) if h.switch != rule_set.switch]
            if src is None or not dst:
                raise InputError(
                    "ports.hosts",
                    f"no host for the entry rule on {rule_set.switch} "
                    f"(in_port {m.in_port}, to {m.ipv4_dst})",
                )
            yield src, dst[0]


def _outputs(flow: FlowRule) -> set[int]:
    return {a.port for a in flow.actions if isinstance(a, Output)}


def _walk_back(
    flows: Sequence[tuple[str, FlowRule]], peers: _Peers, vlan: int, src: HostPort, dst: HostPort
) -> tuple[int, tuple[Hop, ...]]:
    """The ingress port onto VLAN `vlan`'s path towards `dst`, and its hops in order."""
    labelled = [(s, f) for s, f in flows if f.match.vlan_vid == vlan and f.match.in_port]
    egress = [
        f
        for s, f in labelled
        if s == dst.switch and dst.port in _outputs(f) and PopVlan() in f.actions
    ]
    if not egress:
        raise InputError("plan", f"VLAN {vlan} has no rule delivering to {dst.host}")
    switch, rule = dst.switch, egress[0]
    hops: list[Hop] = []
    for _ in range(len(flows) + 1):
        in_port = rule.match.in_port
        assert in_port is not None  # `labelled` holds only rules matching a port
        peer = peers.get((switch, in_port))
        if peer is None:
            raise InputError("plan", f"{switch} port {in_port} (VLAN {vlan}) is on no link")
        previous, port, link = peer
        hops.append(Hop(switch, in_port, vlan, link, previous))
        before = [f for s, f in labelled if s == previous and port in _outputs(f)]
        if not before:
            if previous != src.switch:
                raise InputError("plan", f"VLAN {vlan}'s path to {dst.host} starts at {previous}")
            return port, tuple(reversed(hops))
        switch, rule = previous, before[0]
    raise InputError("plan", f"VLAN {vlan}'s rules towards {dst.host} loop")
