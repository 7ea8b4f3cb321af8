"""The circuit check on a fake network: probes walk the fake switches, their counters judge.

`CircuitProbe`, the `CircuitChecker` the provisioner calls on real switches; a link
brought down (`FakeNetwork.set_link`) or a rule removed shows as lost at
that hop, exactly as on Open vSwitch.
"""

from __future__ import annotations

from collections.abc import Sequence

from braid.adapters.southbound.circuit_probe import CircuitProbe, probe_actions
from braid.adapters.southbound.counters import EXACT
from braid.adapters.southbound.switch_stats import label_counters
from braid.core.provisioning.circuit_check import (
    PROBE_COUNT,
    CheckResult,
    CircuitProbes,
    CounterKey,
)
from braid.core.rules.model import PortMap, RulePlan
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_stats import FakeNetworkStats, send_frames

__all__ = ["FakeCircuitChecker", "fake_counters", "send_probes"]


class FakeCircuitChecker:
    """`CircuitProbe` over the fake network, recording what it checked."""

    def __init__(self, network: FakeNetwork, ports: PortMap, count: int = PROBE_COUNT) -> None:
        # No lag to wait out: the fake's counters move as the probes are sent.
        self.probe = CircuitProbe(FakeNetworkStats(network), ports, count=count, settle=0.0)
        self.checked: list[str] = []  # reservation ids, in the order checked

    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]:
        self.checked.extend(plan.reservation_id for plan in plans)
        return self.probe.check(plans)


def fake_counters(network: FakeNetwork, probes: CircuitProbes) -> dict[CounterKey, int]:
    """Packet counts of the label rules with the probes' cookie, by (switch, in_port, VLAN)."""
    stats, counters = FakeNetworkStats(network), {}
    for switch in probes.switches():
        counters.update(label_counters(switch, stats.flow_counts(switch, probes.cookie, EXACT)))
    return counters


def send_probes(network: FakeNetwork, probes: CircuitProbes) -> None:
    """Each probe's frames, tagged with its VLAN, out of its ingress port."""
    for probe in probes.probes:
        send_frames(network, probe.switch, probe_actions(probe), [probe.frame] * probes.count)
