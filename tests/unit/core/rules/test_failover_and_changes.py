"""Fast-failover to the standby path, and make-before-break modifications."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.model.booking import Allocation
from braid.core.rules.changes import install_steps, make_before_break
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import RuleRequest, Selection, StepKind
from braid.testing.fake_network import FakeNetwork
from tests.unit.core.netgen import simple_paths
from tests.unit.core.rules.scenarios import (
    DST_IP,
    SRC_IP,
    Scenario,
    installed,
    only,
    run,
    scenarios,
    tcp,
    two_path_scenario,
)


@settings(max_examples=80, deadline=None)
@given(scenarios(standby=True), st.integers(1024, 65535))
def test_fast_failover_takes_the_standby_when_the_first_link_dies(
    scenario: Scenario, sport: int
) -> None:
    network, plan = installed(scenario)
    packet = tcp(SRC_IP, DST_IP, sport, 5201)
    before = only(network.send("h1", packet), "h2")
    primary = plan.vlans.index(before.vlans[0])
    first_link = scenario.request.allocations[primary].path.links[0]
    standby = scenario.request.standby
    assert standby is not None
    network.set_link(first_link, up=False)
    after = network.send("h1", packet)
    if first_link in standby.links:
        assert after == []  # the standby shares the failed link: nothing can help
        return
    delivery = only(after, "h2")
    assert set(delivery.vlans) == {plan.standby_vlan}
    assert delivery.links == standby.links
    network.set_link(first_link, up=True)
    assert only(network.send("h1", packet), "h2").vlans == before.vlans


@settings(max_examples=80, deadline=None)
@given(scenarios(), st.data(), st.lists(st.integers(1024, 65535), min_size=1, max_size=8))
def test_make_before_break_never_leaves_a_flow_without_a_route(
    scenario: Scenario, data: st.DataObject, sports: list[int]
) -> None:
    old_request = scenario.request
    src, dst = old_request.allocations[0].path.nodes[0], old_request.allocations[0].path.nodes[-1]
    paths = list(simple_paths(scenario.topology, src, dst))[:12]
    new_paths = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=4))
    new_request = RuleRequest(
        old_request.reservation_id,
        tuple(Allocation(p, data.draw(st.integers(1, 9)) * 1_000_000) for p in new_paths),
        "h1",
        "h2",
        data.draw(st.none() | st.sampled_from(paths)),
        data.draw(st.sampled_from(Selection)),
    )
    network, old = installed(scenario)
    new = compile_reservation(
        new_request, scenario.topology, scenario.ports, LabelPool().with_plans([old])
    )
    steps = make_before_break(old, new)
    for step in steps:
        run(network, (step,))
        for sport in sports:
            only(network.send("h1", tcp(SRC_IP, DST_IP, sport, 5201)), "h2")
            only(network.send("h2", tcp(DST_IP, SRC_IP, 5201, sport)), "h1")
    tables = {s: r for s, r in network.dump().items() if not r.empty}
    assert tables == {r.switch: r for r in new.rule_sets()}
    assert steps[: len(install_steps(new))] == install_steps(new)
    assert all(s.kind is StepKind.REMOVE for s in steps[len(install_steps(new)) :])


def test_make_before_break_refuses_a_plan_that_reuses_old_labels() -> None:
    scenario = two_path_scenario()
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    with pytest.raises(InputError, match="reuses old labels"):
        make_before_break(plan, plan)


def test_install_steps_put_forwarding_before_entry() -> None:
    scenario = two_path_scenario()
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    network = FakeNetwork(scenario.topology, scenario.ports)
    steps = install_steps(plan)
    entry_steps = [i for i, s in enumerate(steps) if s.rule_set in plan.entry]
    assert entry_steps == list(range(len(steps) - len(plan.entry), len(steps)))
    for step in steps[: -len(plan.entry)]:
        run(network, (step,))
        assert network.send("h1", tcp(SRC_IP, DST_IP, 1, 2)) == []
    run(network, steps[-len(plan.entry) :])
    only(network.send("h1", tcp(SRC_IP, DST_IP, 1, 2)), "h2")
