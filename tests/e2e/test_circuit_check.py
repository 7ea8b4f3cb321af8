"""The circuit check on real Open vSwitch bridges joined by veth links (userspace datapath).

Four bridges of a private OVS wired as `two_path_scenario` with veth pairs in
the sandbox's namespace (one end on each bridge, hosts as a veth end each), a
reservation installed by the direct driver; the probe must verify it, and
name the hop after a core rule is deleted or a link goes down.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from braid.adapters.southbound.circuit_probe import OfctlCircuitProbe
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.provisioning.circuit_check import CheckResult
from braid.core.rules.changes import install_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import BRAID_GROUP_IDS, RulePlan, RuleRequest
from tests.e2e.veth_network import ip, wire
from tests.unit.core.rules.scenarios import Scenario, run, two_path_scenario

pytestmark = pytest.mark.e2e


@dataclass
class Circuit:
    ovs: OvsSandbox
    scenario: Scenario
    plan: RulePlan
    probe: OfctlCircuitProbe


@pytest.fixture
def circuit(ovs: OvsSandbox) -> Iterator[Circuit]:
    scenario = two_path_scenario()
    wire(ovs, scenario)
    runner = ofctl_runner(str(ovs.rundir))
    bridges = {s: s for s in scenario.ports.switches}
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(OfctlDriver(bridges, runner), install_steps(plan))
    yield Circuit(ovs, scenario, plan, OfctlCircuitProbe(bridges, scenario.ports, runner))
    # The veths live in the sandbox's namespace, which the `ovs` fixture deletes.


def _check(circuit: Circuit) -> CheckResult:
    """The check, printing how long it took (a figure, not a bound) and what it found."""
    began = time.monotonic()
    result = circuit.probe.check([circuit.plan])[0]
    print(f"circuit check took {time.monotonic() - began:.2f} s: {result.text()}")
    return result


def test_a_healthy_reservation_is_verified_over_real_links(circuit: Circuit) -> None:
    result = _check(circuit)
    assert result.verified, result.text()
    assert [p.passed for p in result.paths] == [2, 2, 2, 2]
    # Checked twice in a row: the second counts only its own probes.
    assert _check(circuit).verified


def test_a_deleted_core_rule_is_reported_lost_at_its_switch(circuit: Circuit) -> None:
    ports, vlan = circuit.scenario.ports, circuit.plan.vlans[0]
    in_port = ports.link_port("s2", "l12")
    circuit.ovs.ofctl(
        "del-flows", "--strict", "s2", f"priority=2000,in_port={in_port},dl_vlan={vlan}"
    )
    result = _check(circuit)
    assert not result.verified
    assert result.text() == (
        f"path 0 (VLAN {vlan}) h1→h2: lost at s2 (no rule for in_port {in_port}, VLAN {vlan})"
    )


def test_a_link_down_is_reported_between_its_switches(circuit: Circuit) -> None:
    ip(circuit.ovs, "link", "set", "l23-s3", "down")
    result = _check(circuit)
    assert not result.verified
    [forward, backward] = result.failures
    vlan = circuit.plan.vlans[0]
    assert forward.text(20) == (
        f"path 0 (VLAN {vlan}) h1→h2: 20 of 20 probes lost between s2 and s3 (link l23)"
    )
    assert backward.probe.name == f"path 0 (VLAN {vlan}) h2→h1"
    assert backward.lost_at is not None and backward.lost_at.link == "l23"


def test_reservations_installed_together_are_checked_together(circuit: Circuit) -> None:
    scenario, runner = circuit.scenario, ofctl_runner(str(circuit.ovs.rundir))
    upper, right = Path(("s1", "s2"), ("l12",)), Path(("s2", "s3"), ("l23",))
    others = [
        RuleRequest(f"r{i}", (Allocation(path, 10_000_000),), src, dst)
        for i, (path, src, dst) in enumerate([(upper, "h1", "h3"), (right, "h3", "h2")], 2)
    ]
    plans = [circuit.plan]
    for i, request in enumerate(others, 1):
        pool = LabelPool(range(100 * i, 100 * i + 99), BRAID_GROUP_IDS[100 * i :])
        plans.append(compile_reservation(request, scenario.topology, scenario.ports, pool))
        run(OfctlDriver({s: s for s in scenario.ports.switches}, runner), install_steps(plans[-1]))
    began = time.monotonic()
    results = circuit.probe.check(plans)
    print(f"3 reservations checked together in {time.monotonic() - began:.2f} s")
    assert [r.verified for r in results] == [True, True, True], [r.text() for r in results]
    assert [len(r.paths) for r in results] == [4, 2, 2]
