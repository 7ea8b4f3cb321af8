"""Per-flow VLAN choice: pinned flows take the hash's path both ways, and nothing else."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.rules.changes import removal_steps
from braid.core.rules.flow_hash import FiveTuple
from braid.core.rules.flow_pinning import pin_flow, pinned_path
from braid.core.rules.model import RuleSet
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


@settings(max_examples=60, deadline=None)
@given(scenarios(), st.lists(st.integers(1024, 65535), min_size=1, max_size=10, unique=True))
def test_a_pinned_flow_and_its_reply_take_the_hashed_path(
    scenario: Scenario, sports: list[int]
) -> None:
    network, plan = installed(scenario)
    pinned: list[RuleSet] = []
    for sport in sports:
        flow = FiveTuple(SRC_IP, DST_IP, 6, sport, 5201)
        pinned.extend(pin_flow(plan, scenario.request, scenario.ports, flow))
        network.apply_all(pinned[-2:])
        want = plan.vlans[pinned_path(scenario.request, flow)]
        there = only(network.send("h1", tcp(SRC_IP, DST_IP, sport, 5201)), "h2")
        back = only(network.send("h2", tcp(DST_IP, SRC_IP, 5201, sport)), "h1")
        assert set(there.vlans) == set(back.vlans) == {want}
    for rule_set in pinned:
        network.remove(rule_set)
    run(network, removal_steps(plan))
    assert all(r.empty for r in network.dump().values())


def test_pinned_rules_outrank_the_entry_rule_and_match_only_their_flow() -> None:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    flow = FiveTuple(SRC_IP, DST_IP, 6, 40000, 5201)
    forward, _ = pin_flow(plan, scenario.request, scenario.ports, flow)
    network.apply(forward)
    switch = network.switches["s1"]
    port = scenario.ports.host("h1").port
    packet = dataclasses.replace(tcp(SRC_IP, DST_IP, 40000, 5201), in_port=port)
    assert switch.lookup(packet) == forward.flows[0]
    other = dataclasses.replace(packet, tp_src=40001)
    assert switch.lookup(other) != forward.flows[0]


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        (FiveTuple(DST_IP, SRC_IP, 6, 1, 2), "flow"),
        (FiveTuple(SRC_IP, DST_IP, 1), "flow.proto"),
    ],
)
def test_flows_of_other_hosts_or_protocols_are_refused(flow: FiveTuple, field: str) -> None:
    scenario = two_path_scenario()
    _, plan = installed(scenario)
    with pytest.raises(InputError) as error:
        pin_flow(plan, scenario.request, scenario.ports, flow)
    assert error.value.field == field
