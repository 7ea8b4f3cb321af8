"""The circuit check on real Open vSwitch bridges joined by veth links (userspace datapath).

Four bridges of a private OVS wired as `two_path_scenario` with veth pairs in
the sandbox's namespace (one end on each bridge, hosts as a veth end each), a
reservation installed by the direct driver, or by a `braid controller` the
bridges connect to (probes and counters then go through its API too); the
probe must verify it, and name the hop after a core rule is deleted or a
link goes down. With the controller, delivery counters read through it move
with traffic injected at h1's port.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from braid.adapters.southbound.circuit_probe import CircuitProbe
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.controller_stats import ControllerStats
from braid.adapters.southbound.counters import SwitchCounters
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.ofctl_stats import OfctlStats
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.adapters.southbound.switch_stats import SwitchStats
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.provisioning.circuit_check import CheckResult
from braid.core.rules.changes import install_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import BRAID_GROUP_IDS, RulePlan, RuleRequest
from tests.e2e.test_delivery import _frame
from tests.e2e.veth_network import ip, wire
from tests.e2e.waiting import wait_for
from tests.unit.core.rules.scenarios import Scenario, run, two_path_scenario

pytestmark = pytest.mark.e2e


@dataclass
class Circuit:
    ovs: OvsSandbox
    scenario: Scenario
    plan: RulePlan
    driver: SouthboundDriver
    stats: SwitchStats

    @property
    def probe(self) -> CircuitProbe:
        return CircuitProbe(self.stats, self.scenario.ports)


@pytest.fixture(params=["direct", "controller"])
def circuit(request: pytest.FixtureRequest, ovs: OvsSandbox) -> Iterator[Circuit]:
    scenario = two_path_scenario()
    dpids = {s: p.dpid for s, p in scenario.ports.switches.items()}
    driver: SouthboundDriver
    stats: SwitchStats
    if request.param == "controller":
        api = request.getfixturevalue("controller")
        wire(ovs, scenario, "tcp:127.0.0.1:6653")
        client = ControllerDriver(api)
        assert wait_for(lambda: set(client.switches()) == set(dpids.values()))
        driver, stats = client, ControllerStats(client, dpids)
    else:
        wire(ovs, scenario)
        runner = ofctl_runner(str(ovs.rundir))
        bridges = {s: s for s in scenario.ports.switches}
        driver, stats = OfctlDriver(bridges, runner), OfctlStats(bridges, runner)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    yield Circuit(ovs, scenario, plan, driver, stats)
    if isinstance(driver, ControllerDriver):
        driver.close()
    # The veths live in the sandbox's namespace, which the `ovs` fixture deletes.


def _check(circuit: Circuit) -> CheckResult:
    """The check, printing how long it took (a figure, not a bound) and what it found."""
    began = time.monotonic()
    result: CheckResult = circuit.probe.check([circuit.plan])[0]
    took = time.monotonic() - began
    print(f"{type(circuit.driver).__name__}: circuit check took {took:.2f} s: {result.text()}")
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
    scenario = circuit.scenario
    upper, right = Path(("s1", "s2"), ("l12",)), Path(("s2", "s3"), ("l23",))
    others = [
        RuleRequest(f"r{i}", (Allocation(path, 10_000_000),), src, dst)
        for i, (path, src, dst) in enumerate([(upper, "h1", "h3"), (right, "h3", "h2")], 2)
    ]
    plans = [circuit.plan]
    for i, request in enumerate(others, 1):
        pool = LabelPool(range(100 * i, 100 * i + 99), BRAID_GROUP_IDS[100 * i :])
        plans.append(compile_reservation(request, scenario.topology, scenario.ports, pool))
        run(circuit.driver, install_steps(plans[-1]))
    began = time.monotonic()
    results = circuit.probe.check(plans)
    print(f"3 reservations checked together in {time.monotonic() - began:.2f} s")
    assert [r.verified for r in results] == [True, True, True], [r.text() for r in results]
    assert [len(r.paths) for r in results] == [4, 2, 2]


def test_delivery_counters_move_with_traffic(circuit: Circuit) -> None:
    ports = circuit.scenario.ports
    h1, h2 = ports.host("h1"), ports.host("h2")
    counters = SwitchCounters(circuit.stats)
    before = counters.read(circuit.plan, h1, h2).forward
    frame = _frame(h1.ipv4, h2.ipv4)  # 1000 bytes, through s1's tables as if h1 sent it
    for _ in range(10):
        circuit.ovs.ofctl("packet-out", "s1", f"in_port={h1.port} packet={frame} actions=table")

    def grown() -> bool:
        now = counters.read(circuit.plan, h1, h2).forward
        return (now.offered_bytes, now.delivered_bytes) == (
            before.offered_bytes + 10_000,
            before.delivered_bytes + 10_000,
        )

    assert wait_for(grown), (before, counters.read(circuit.plan, h1, h2).forward)
