"""The direct driver's logic against an in-memory ovs-ofctl (real OVS: tests/e2e)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from braid.adapters.southbound.direct import OfctlDriver
from braid.adapters.southbound.driver import SouthboundDriver, SouthboundError
from braid.core.rules.changes import install_steps, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import FlowRule, Match, Output, RuleSet, Selection
from tests.unit.adapters.southbound.fake_ofctl import FakeOfctl
from tests.unit.core.rules.scenarios import Scenario, run, scenarios, two_path_scenario


def driver_for(scenario: Scenario, *, bundles: bool = True) -> tuple[OfctlDriver, FakeOfctl]:
    fake = FakeOfctl({s: p.dpid for s, p in scenario.ports.switches.items()}, bundles=bundles)
    return OfctlDriver({s: s for s in scenario.ports.switches}, fake), fake


def test_the_driver_meets_the_protocol() -> None:
    driver, _ = driver_for(two_path_scenario())
    assert isinstance(driver, SouthboundDriver)


@settings(max_examples=40, deadline=None)
@given(scenarios(selection=Selection.FLOW))
def test_apply_dump_remove_round_trip(scenario: Scenario) -> None:
    driver, _ = driver_for(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    assert {s: r for s, r in driver.dump().items() if not r.empty} == {
        r.switch: r for r in plan.rule_sets()
    }
    run(driver, removal_steps(plan))
    assert all(r.empty for r in driver.dump().values())


def test_without_bundles_it_falls_back_to_separate_commands_once() -> None:
    scenario = two_path_scenario(standby=True)
    driver, fake = driver_for(scenario, bundles=False)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    assert driver.bundle is False
    assert fake.calls.count("bundle") == 1
    assert {"add-groups", "add-flows"} <= set(fake.calls)
    assert {s: r for s, r in driver.dump().items() if not r.empty} == {
        r.switch: r for r in plan.rule_sets()
    }


def test_a_refused_change_inside_a_bundle_is_an_error_not_a_reason_to_drop_bundles() -> None:
    scenario = two_path_scenario()
    driver, fake = driver_for(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    fake.refuse = (
        "Error OFPBAC_BAD_OUT_GROUP for: OFPT_FLOW_MOD ...\n"
        "Error OFPBFC_MSG_FAILED for: ONFT_BUNDLE_CONTROL ... bundle_id=0 type=COMMIT_REQUEST"
    )
    with pytest.raises(SouthboundError, match="OFPBAC_BAD_OUT_GROUP"):
        driver.apply(plan.rule_sets()[0])
    assert driver.bundle is True
    assert driver.desired.tables() == {}


def test_reconcile_restores_lost_tables_and_deletes_leftovers() -> None:
    scenario = two_path_scenario(standby=True)
    driver, fake = driver_for(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    fake.switches["s1"].flows.clear()  # as after a restart
    fake.switches["s1"].groups.clear()
    stray = FlowRule(2000, Match(in_port=7), (Output(1),), cookie=plan.cookie)
    fake.switches["s2"].flows[stray.key] = stray
    reports = driver.reconcile()
    assert {s for s, r in reports.items() if r.changed} == {"s1", "s2"}
    assert reports["s2"].deleted.flows == (stray,)
    assert reports["s1"].added == next(r for r in plan.rule_sets() if r.switch == "s1")
    assert not any(r.changed for r in driver.reconcile().values())


def test_an_unknown_switch_is_an_error_naming_it() -> None:
    driver, _ = driver_for(two_path_scenario())
    with pytest.raises(SouthboundError, match="switch s9: not managed"):
        driver.apply(RuleSet("s9", 9))


def test_a_failing_switch_is_reported_with_its_name_and_nothing_is_recorded() -> None:
    scenario = two_path_scenario()
    driver, fake = driver_for(scenario)
    del fake.switches["s2"]
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    s2 = next(r for r in plan.rule_sets() if r.switch == "s2")
    with pytest.raises(SouthboundError, match="switch s2: s2 is not a bridge"):
        driver.apply(s2)
    assert driver.desired.tables() == {}
