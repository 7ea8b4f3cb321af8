"""Both southbound drivers against real Open vSwitch bridges (userspace datapath)."""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.driver import SouthboundDriver, SouthboundError
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.core.rules.changes import install_steps, make_before_break, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool, reservation_cookie
from braid.core.rules.model import (
    BRAID_GROUP_IDS,
    FlowRule,
    GroupAction,
    Match,
    Output,
    RulePlan,
    RuleSet,
    Step,
    StepKind,
)
from tests.e2e.waiting import wait_for
from tests.unit.core.rules.scenarios import Scenario, two_path_scenario

pytestmark = pytest.mark.e2e

SWITCHES = ("s1", "s2", "s3", "s4")


def bridges(ovs: OvsSandbox, scenario: Scenario, controller: str | None = None) -> None:
    for name in SWITCHES:
        ovs.add_bridge(name, scenario.ports.switch(name).dpid, controller)


def run(driver: SouthboundDriver, steps: tuple[Step, ...]) -> None:
    for step in steps:
        if step.kind is StepKind.APPLY:
            driver.apply(step.rule_set)
        else:
            driver.remove(step.rule_set)


def tables(driver: SouthboundDriver) -> dict[str, RuleSet]:
    return {name: r for name, r in driver.dump().items() if not r.empty}


def expected(plan: RulePlan) -> dict[str, RuleSet]:
    return {r.switch: r for r in plan.rule_sets()}


@pytest.fixture
def scenario() -> Scenario:
    return two_path_scenario(standby=True)


@pytest.fixture(params=["direct", "direct-unbundled", "controller"])
def driver(
    request: pytest.FixtureRequest, ovs: OvsSandbox, scenario: Scenario
) -> Iterator[SouthboundDriver]:
    if request.param == "controller":
        api = request.getfixturevalue("controller")
        bridges(ovs, scenario, "tcp:127.0.0.1:6653")
        with ControllerDriver(api) as client:
            assert wait_for(lambda: len(client.switches()) == len(SWITCHES))
            yield client
        return
    bridges(ovs, scenario)
    runner = ofctl_runner(str(ovs.rundir))
    yield OfctlDriver({s: s for s in SWITCHES}, runner, bundle=request.param == "direct")


def test_apply_then_dump_shows_exactly_the_rule_set(
    driver: SouthboundDriver, scenario: Scenario
) -> None:
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    assert tables(driver) == expected(plan)
    run(driver, install_steps(plan))  # applying again changes nothing
    assert tables(driver) == expected(plan)


def test_remove_leaves_the_tables_empty(driver: SouthboundDriver, scenario: Scenario) -> None:
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    run(driver, removal_steps(plan))
    assert tables(driver) == {}
    assert all(not report.changed for report in driver.reconcile().values())


def test_make_before_break_ends_with_exactly_the_new_plan(
    driver: SouthboundDriver, scenario: Scenario
) -> None:
    old = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(old))
    moved = two_path_scenario(standby=False).request
    pool = LabelPool().with_plans([old])
    new = compile_reservation(moved, scenario.topology, scenario.ports, pool)
    run(driver, make_before_break(old, new))
    assert tables(driver) == expected(new)


def test_reconcile_removes_leftovers_and_repairs_changed_entries(
    ovs: OvsSandbox, driver: SouthboundDriver, scenario: Scenario
) -> None:
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    # A leaked braid flow (as after a crash mid-change) and a tampered one.
    ovs.ofctl("add-flow", "s2", "cookie=0xb7a1000000000bad,priority=2000,in_port=9,actions=drop")
    ovs.ofctl(
        "add-flow", "s4", "cookie=0xb7a1000000000bad,priority=2000,dl_vlan=2,in_port=1,actions=drop"
    )
    # Somebody else's flow is not braid's to touch.
    ovs.ofctl("add-flow", "s2", "cookie=0x1,priority=1,actions=drop")
    reports = driver.reconcile()
    assert [f.match.in_port for f in reports["s2"].deleted.flows] == [9]
    assert len(reports["s4"].added.flows) == 1
    assert tables(driver) == expected(plan)
    assert "cookie=0x1," in ovs.ofctl("dump-flows", "s2")
    assert all(not report.changed for report in driver.reconcile().values())


def test_a_restarted_switch_gets_its_rules_back(
    ovs: OvsSandbox, driver: SouthboundDriver, scenario: Scenario
) -> None:
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    ovs.restart_switch()
    if isinstance(driver, ControllerDriver):
        # The controller reconciles each switch by itself when it reconnects.
        assert wait_for(lambda: _quietly(lambda: tables(driver) == expected(plan)))
    else:
        assert ovs.ofctl("dump-flows", "s1").count("cookie=") == 0
        reports = driver.reconcile()
        assert {s for s, r in reports.items() if r.changed} == set(SWITCHES)
        assert tables(driver) == expected(plan)


def _quietly(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except Exception:  # the switch may still be reconnecting
        return False


def test_a_restarted_controller_with_a_state_file_restores_the_switches(
    ovs: OvsSandbox, scenario: Scenario
) -> None:
    state = ovs.rundir / "desired.json"
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    first = ovs.start_controller(state_file=state)
    try:
        bridges(ovs, scenario, "tcp:127.0.0.1:6653")
        with ControllerDriver(ovs.controller_api) as client:
            assert wait_for(lambda: len(client.switches()) == len(SWITCHES))
            run(client, install_steps(plan))
    finally:
        first.terminate()
        first.wait(timeout=10)
    ovs.restart_switch()  # the tables are lost while no controller runs
    assert ovs.ofctl("dump-flows", "s1").count("cookie=") == 0
    second = ovs.start_controller(state_file=state)
    try:
        with ControllerDriver(ovs.controller_api) as client:
            assert wait_for(lambda: _quietly(lambda: tables(client) == expected(plan)))
    finally:
        second.terminate()
        second.wait(timeout=10)


def test_a_fresh_controller_without_state_leaves_the_switches_alone_then_takes_over(
    ovs: OvsSandbox, scenario: Scenario
) -> None:
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    for attempt in range(2):
        process = ovs.start_controller()
        try:
            if attempt == 0:
                bridges(ovs, scenario, "tcp:127.0.0.1:6653")
            with ControllerDriver(ovs.controller_api) as client:
                assert wait_for(lambda: len(client.switches()) == len(SWITCHES))
                # The second controller found the rules in place and kept them
                # (it knows the switches by datapath id only, until told their names)...
                held = {r.dpid: (r.flows, r.groups) for r in tables(client).values()}
                want = {r.dpid: (r.flows, r.groups) for r in expected(plan).values()}
                assert held == ({} if attempt == 0 else want)
                # ...and can take them over: the groups exist, so they are modified.
                run(client, install_steps(plan))
                assert tables(client) == expected(plan)
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_a_refused_change_raises_and_is_not_remembered(
    driver: SouthboundDriver, scenario: Scenario
) -> None:
    cookie = reservation_cookie("refused")
    good = FlowRule(2000, Match(in_port=1, vlan_vid=7), (Output(2),), cookie)
    bad = FlowRule(2000, Match(in_port=2, vlan_vid=7), (GroupAction(BRAID_GROUP_IDS[-1]),), cookie)
    refused = RuleSet.of("s2", scenario.ports.switch("s2").dpid, [good, bad])
    with pytest.raises(SouthboundError, match="s2"):
        driver.apply(refused)
    if isinstance(driver, OfctlDriver) and driver.bundle:
        assert tables(driver) == {}  # a bundle is atomic: not even the good flow went in
    driver.reconcile()  # elsewhere a part may have gone in; it was never desired
    assert tables(driver) == {}


def test_a_controller_with_a_token_serves_only_who_sends_it(
    ovs: OvsSandbox, scenario: Scenario
) -> None:
    token_file = ovs.rundir / "controller.token"
    token_file.write_text("e2e-controller-token\n")
    token_file.chmod(0o600)
    process = ovs.start_controller(token_file=token_file)
    try:
        socket_path = Path(ovs.controller_api[len("unix:") :])
        assert stat.S_IMODE(socket_path.stat().st_mode) == 0o600
        bridges(ovs, scenario, "tcp:127.0.0.1:6653")
        with (
            ControllerDriver(ovs.controller_api) as stranger,
            pytest.raises(SouthboundError, match="missing API token"),
        ):
            stranger.switches()
        with ControllerDriver(ovs.controller_api, token="e2e-controller-token") as client:
            assert wait_for(lambda: len(client.switches()) == len(SWITCHES))
            plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
            run(client, install_steps(plan))
            assert tables(client) == expected(plan)
    finally:
        process.terminate()
        process.wait(timeout=10)
