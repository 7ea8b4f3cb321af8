"""The direct driver's logic against an in-memory ovs-ofctl (real OVS: tests/e2e)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.southbound.direct import OfctlDriver
from braid.adapters.southbound.driver import SouthboundDriver, SouthboundError
from braid.adapters.southbound.tc_queues import TcQueues, held
from braid.core.rules.changes import install_steps, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import FlowRule, Match, Meter, Output, Policing, RuleSet, Selection
from tests.unit.adapters.southbound.fake_ofctl import FakeOfctl
from tests.unit.adapters.southbound.fake_tc import FakeTc
from tests.unit.core.rules.scenarios import Scenario, run, scenarios, two_path_scenario


def driver_for(scenario: Scenario, *, bundles: bool = True) -> tuple[OfctlDriver, FakeOfctl]:
    driver, fake, _ = driver_and_fakes(scenario, bundles=bundles)
    return driver, fake


def driver_and_fakes(
    scenario: Scenario, *, bundles: bool = True
) -> tuple[OfctlDriver, FakeOfctl, FakeTc]:
    """A driver on in-memory ovs-ofctl and tc; port n of switch s is netdev `s-ethn`."""
    ports = {s: sorted(p.link_ports.values()) for s, p in scenario.ports.switches.items()}
    for host in scenario.ports.hosts.values():
        ports[host.switch].append(host.port)
    dpids = {s: p.dpid for s, p in scenario.ports.switches.items()}
    fake = FakeOfctl(dpids, bundles=bundles, ports=ports)
    tc = FakeTc([f"{s}-eth{n}" for s, numbers in ports.items() for n in numbers])
    driver = OfctlDriver({s: s for s in dpids}, fake, queues=TcQueues(tc))
    return driver, fake, tc


def policed(scenario: Scenario, policing: Policing) -> Scenario:
    return replace(scenario, request=replace(scenario.request, policing=policing))


def test_the_driver_meets_the_protocol() -> None:
    driver, _ = driver_for(two_path_scenario())
    assert isinstance(driver, SouthboundDriver)


@settings(max_examples=40, deadline=None)
@given(scenarios(selection=Selection.FLOW), st.sampled_from([None, *Policing]))
def test_apply_dump_remove_round_trip(scenario: Scenario, policing: Policing | None) -> None:
    scenario = replace(scenario, request=replace(scenario.request, policing=policing))
    driver, _, tc = driver_and_fakes(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    # Queues read back as tc holds them (the scenarios' links are a few bit/s).
    assert {s: r for s, r in driver.dump().items() if not r.empty} == {
        r.switch: replace(r, queues=tuple(held(q) for q in r.queues)) for r in plan.rule_sets()
    }
    run(driver, removal_steps(plan))
    assert all(r.empty for r in driver.dump().values())
    assert all(dev.qdisc is None for dev in tc.devs.values())


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


def test_meters_go_before_the_flows_naming_them_and_after_those_flows_on_removal() -> None:
    scenario = policed(two_path_scenario(), Policing.HARD)
    driver, fake = driver_for(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    s1 = next(r for r in plan.rule_sets() if r.switch == "s1")
    assert s1.meters and any(f.meter_id is not None for f in s1.flows)
    driver.apply(s1)  # the fake refuses a flow naming a meter it does not hold
    assert fake.calls.index("add-meter") < fake.calls.index("bundle")
    assert driver.dump()["s1"] == s1
    fake.calls.clear()
    driver.remove(s1)
    assert fake.calls.index("bundle") < fake.calls.index("del-meters")
    assert driver.dump()["s1"].empty


def test_applying_a_changed_meter_modifies_it_in_place() -> None:
    scenario = policed(two_path_scenario(), Policing.HARD)
    driver, fake = driver_for(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    s1 = next(r for r in plan.rule_sets() if r.switch == "s1")
    driver.apply(s1)
    meter = s1.meters[0]
    faster = replace(s1, meters=(Meter(meter.meter_id, 2 * meter.rate_kbps, meter.burst_kbits),))
    driver.apply(faster)
    assert "mod-meter" in fake.calls
    assert driver.dump()["s1"].meters == faster.meters
    assert driver.dump()["s1"].flows == s1.flows  # the flows through it stayed


@pytest.mark.parametrize("policing", list(Policing))
def test_reconcile_restores_lost_meters_and_queues(policing: Policing) -> None:
    scenario = policed(two_path_scenario(standby=True), policing)
    driver, fake, tc = driver_and_fakes(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    s1 = fake.switches["s1"]
    s1.flows.clear()  # as after a restart: tables and meters gone, and a port's queues lost
    s1.groups.clear()
    s1.meters.clear()
    lost = next(dev for name, dev in tc.devs.items() if name.startswith("s2-") and dev.qdisc)
    lost.qdisc, lost.classes, lost.filters = None, {}, {}
    reports = driver.reconcile()
    assert {s for s, r in reports.items() if r.changed} == {"s1", "s2"}
    # s1's queues live in the ports' netdevs, not in the switch: they outlived its restart.
    s1_plan = next(r for r in plan.rule_sets() if r.switch == "s1")
    assert reports["s1"].added == replace(s1_plan, queues=())
    assert reports["s2"].added.queues and not reports["s2"].added.flows
    assert {s: r for s, r in driver.dump().items() if not r.empty} == {
        r.switch: r for r in plan.rule_sets()
    }
    assert not any(r.changed for r in driver.reconcile().values())


def test_a_fresh_driver_reconciling_to_nothing_removes_meters_and_queues() -> None:
    scenario = policed(two_path_scenario(), Policing.HARD)
    driver, fake, tc = driver_and_fakes(scenario)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(driver, install_steps(plan))
    fresh = OfctlDriver(driver.bridges, fake, queues=TcQueues(tc))
    fresh.reconcile()
    assert all(r.empty for r in fresh.dump().values())
    assert all(dev.qdisc is None for dev in tc.devs.values())
    assert not any(s.meters for s in fake.switches.values())


def test_a_queue_on_a_port_the_switch_lacks_is_an_error_naming_both() -> None:
    scenario = policed(two_path_scenario(), Policing.SOFT)
    driver, fake = driver_for(scenario)
    fake.ports["s1"] = []
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    s1 = next(r for r in plan.rule_sets() if r.switch == "s1")
    with pytest.raises(SouthboundError, match="switch s1: queue on port"):
        driver.apply(s1)
