"""Random reservations on random small networks, wired with ports, for rule tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from hypothesis import strategies as st

from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.rules.changes import install_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import (
    HostPort,
    PortMap,
    RulePlan,
    RuleRequest,
    RuleSet,
    Selection,
    Step,
    StepKind,
    SwitchPorts,
)
from braid.testing.fake_network import Delivery, FakeNetwork
from braid.testing.fake_switch import Packet
from tests.unit.core.netgen import simple_paths, topologies

SRC_IP, DST_IP, BYSTANDER_IP = "10.0.0.1", "10.0.0.2", "10.0.0.3"


@dataclass(frozen=True)
class Scenario:
    topology: Topology
    ports: PortMap
    request: RuleRequest


def port_map(topology: Topology, hosts: dict[str, tuple[str, str]]) -> PortMap:
    """Ports numbered from 1 per switch in link order; hosts (name -> switch, ip) after."""
    next_port = dict.fromkeys(topology.nodes, 1)
    link_ports: dict[str, dict[str, int]] = {n: {} for n in topology.nodes}
    for link in topology.links.values():
        for end in (link.a, link.b):
            link_ports[end][link.id] = next_port[end]
            next_port[end] += 1
    attached = {}
    for name, (switch, ip) in hosts.items():
        attached[name] = HostPort(name, switch, next_port[switch], ip)
        next_port[switch] += 1
    switches = {
        n: SwitchPorts(n, i + 1, link_ports[n]) for i, n in enumerate(sorted(topology.nodes))
    }
    return PortMap(switches, attached)


@st.composite
def scenarios(
    draw: st.DrawFn,
    *,
    standby: bool | None = None,
    selection: Selection = Selection.FLOW,
    max_paths: int = 4,
) -> Scenario:
    """A reservation between h1 and h2 over 1..max_paths paths, maybe with a standby path."""
    topology = draw(topologies(max_nodes=6))
    nodes = sorted(topology.nodes)
    src, dst = draw(st.permutations(nodes))[:2]
    paths = list(simple_paths(topology, src, dst))[:12]
    if not paths:
        topology, src, dst, paths = _line()
        nodes = sorted(topology.nodes)
    chosen = draw(st.lists(st.sampled_from(paths), min_size=1, max_size=max_paths))
    allocations = tuple(
        Allocation(p, draw(st.integers(1, 10)) * 1_000_000 * draw(st.sampled_from([1, 3])))
        for p in chosen
    )
    with_standby = draw(st.booleans()) if standby is None else standby
    backup: Path | None = draw(st.sampled_from(paths)) if with_standby else None
    others = [n for n in nodes if n not in (src, dst)] or [src]
    hosts = {
        "h1": (src, SRC_IP),
        "h2": (dst, DST_IP),
        "h3": (draw(st.sampled_from(others)), BYSTANDER_IP),
    }
    request = RuleRequest("r1", allocations, "h1", "h2", backup, selection)
    return Scenario(topology, port_map(topology, hosts), request)


def _line() -> tuple[Topology, str, str, list[Path]]:
    topology = topology_from_dict(
        {
            "nodes": [{"id": "a"}, {"id": "b"}],
            "links": [{"id": "ab", "a": "a", "b": "b", "capacity": 10, "latency_ms": 1}],
        }
    )
    return topology, "a", "b", [Path(("a", "b"), ("ab",))]


def tcp(src_ip: str, dst_ip: str, sport: int, dport: int) -> Packet:
    """A TCP packet header (in_port is set by the network when sent from a host)."""
    return Packet(0, ipv4_src=src_ip, ipv4_dst=dst_ip, ip_proto=6, tp_src=sport, tp_dst=dport)


def two_path_scenario(*, standby: bool = False) -> Scenario:
    """h1 on s1, h2 on s3; paths s1-s2-s3 (300 Mbit/s) and s1-s4-s3 (100 Mbit/s)."""
    wiring = [
        ("l12", "s1", "s2"),
        ("l23", "s2", "s3"),
        ("l14", "s1", "s4"),
        ("l43", "s4", "s3"),
        ("l13", "s1", "s3"),
    ]
    topology = topology_from_dict(
        {
            "nodes": [{"id": s} for s in ("s1", "s2", "s3", "s4")],
            "links": [
                {"id": i, "a": a, "b": b, "capacity": 1000, "latency_ms": 1} for i, a, b in wiring
            ],
        }
    )
    upper = Path(("s1", "s2", "s3"), ("l12", "l23"))
    lower = Path(("s1", "s4", "s3"), ("l14", "l43"))
    direct = Path(("s1", "s3"), ("l13",))
    hosts = {"h1": ("s1", SRC_IP), "h2": ("s3", DST_IP), "h3": ("s2", BYSTANDER_IP)}
    request = RuleRequest(
        "r1",
        (Allocation(upper, 300_000_000), Allocation(lower, 100_000_000)),
        "h1",
        "h2",
        direct if standby else None,
    )
    return Scenario(topology, port_map(topology, hosts), request)


def installed(scenario: Scenario) -> tuple[FakeNetwork, RulePlan]:
    """A fake network holding the scenario's compiled plan."""
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    network = FakeNetwork(scenario.topology, scenario.ports)
    run(network, install_steps(plan))
    return network, plan


class Programmable(Protocol):
    """A fake network or a southbound driver: anything that takes rule sets."""

    def apply(self, rule_set: RuleSet) -> None: ...
    def remove(self, rule_set: RuleSet) -> None: ...


def run(target: Programmable, steps: tuple[Step, ...]) -> None:
    """Carry out ordered install/remove steps."""
    for step in steps:
        if step.kind is StepKind.APPLY:
            target.apply(step.rule_set)
        else:
            target.remove(step.rule_set)


def only(deliveries: list[Delivery], host: str) -> Delivery:
    """The single copy that arrived, checking it arrived at `host`."""
    assert [d.host for d in deliveries] == [host]
    return deliveries[0]
