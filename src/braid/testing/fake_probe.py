"""The circuit check on a fake network: probes walk the fake switches, their counters judge.

The same `CircuitChecker` the provisioner calls on real switches; a link
brought down (`FakeNetwork.set_link`) or a rule removed shows as lost at
that hop, exactly as on Open vSwitch.
"""

from __future__ import annotations

from collections.abc import Sequence

from braid.core.provisioning.circuit_check import (
    PROBE_COUNT,
    CheckResult,
    CircuitProbes,
    CounterKey,
    circuit_probes,
    judge,
)
from braid.core.rules.model import PortMap, RulePlan
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import Packet

__all__ = ["FakeCircuitChecker", "fake_counters", "send_probes"]


class FakeCircuitChecker:
    def __init__(self, network: FakeNetwork, ports: PortMap, count: int = PROBE_COUNT) -> None:
        self.network, self.ports, self.count = network, ports, count
        self.checked: list[str] = []  # reservation ids, in the order checked

    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]:
        self.checked.extend(plan.reservation_id for plan in plans)
        probes = [circuit_probes(plan, self.ports, self.count) for plan in plans]
        before = [fake_counters(self.network, p) for p in probes]
        for each in probes:
            send_probes(self.network, each)
        after = [fake_counters(self.network, p) for p in probes]
        return [judge(*counts) for counts in zip(probes, before, after, strict=True)]


def fake_counters(network: FakeNetwork, probes: CircuitProbes) -> dict[CounterKey, int]:
    """n_packets of every label rule with the probes' cookie, by (switch, in_port, VLAN)."""
    counters: dict[CounterKey, int] = {}
    for name in probes.switches():
        switch = network.switches[name]
        for key, flow in switch.flows.items():
            m = flow.match
            if flow.cookie == probes.cookie and m.in_port is not None and m.vlan_vid:
                counters[(name, m.in_port, m.vlan_vid)] = switch.flow_counts.get(key, (0, 0))[0]
    return counters


def send_probes(network: FakeNetwork, probes: CircuitProbes) -> None:
    """Each probe's frames, tagged with its VLAN, out of its ingress port."""
    for probe in probes.probes:
        packet = Packet(
            0,
            vlan=probe.vlan,
            ipv4_src=probe.src.ipv4,
            ipv4_dst=probe.dst.ipv4,
            ip_proto=17,
        )
        for _ in range(probes.count):
            network.send_out(probe.switch, probe.out_port, packet)
