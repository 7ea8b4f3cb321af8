"""Which flows count what: found by what they do, for any compiled reservation."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.delivery import FlowRef, counted_flows, tally_of
from braid.core.delivery.samples import VLAN_TAG_BYTES
from braid.core.errors import InputError
from braid.core.rules.compiler import ENTRY_PRIORITY, compile_reservation
from braid.core.rules.model import ETH_TYPE_IPV4, Output, Policing, PopVlan
from tests.unit.core.rules.scenarios import Scenario, scenarios, two_path_scenario


@settings(max_examples=60, deadline=None)
@given(scenarios(), st.sampled_from([None, Policing.HARD, Policing.SOFT]))
def test_each_direction_has_one_entry_rule_and_an_egress_rule_per_label(
    scenario: Scenario, policing: Policing | None
) -> None:
    request = replace(scenario.request, policing=policing)
    plan = compile_reservation(request, scenario.topology, scenario.ports)
    src, dst = scenario.ports.host("h1"), scenario.ports.host("h2")
    forward, reverse = counted_flows(plan, src, dst)
    for direction, here, there in ((forward, src, dst), (reverse, dst, src)):
        assert (direction.sender, direction.receiver) == (here.host, there.host)
        entry = direction.entry
        assert (entry.switch, entry.priority) == (here.switch, ENTRY_PRIORITY)
        assert entry.match.eth_type == ETH_TYPE_IPV4
        assert (entry.match.ipv4_src, entry.match.ipv4_dst) == (here.ipv4, there.ipv4)
        assert {ref.match.vlan_vid for ref in direction.egress} == set(plan.labels)
        assert all(ref.switch == there.switch for ref in direction.egress)
        assert (direction.meter is not None) == (policing is Policing.HARD)


def test_the_egress_rules_are_the_ones_that_pop_and_deliver() -> None:
    scenario = two_path_scenario(standby=True)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    dst = scenario.ports.host("h2")
    forward, _ = counted_flows(plan, scenario.ports.host("h1"), dst)
    flows = {FlowRef.of(rs.switch, f): f for rs in plan.forwarding for f in rs.flows}
    for ref in forward.egress:
        assert flows[ref].actions == (PopVlan(), Output(dst.port))
    assert len(forward.egress) == 3  # two paths and the standby


def test_a_plan_for_other_hosts_is_refused() -> None:
    scenario = two_path_scenario()
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    with pytest.raises(InputError) as raised:
        counted_flows(plan, scenario.ports.host("h3"), scenario.ports.host("h2"))
    assert raised.value.field == "plan.entry"


def test_a_tally_sums_the_paths_and_leaves_out_the_label() -> None:
    scenario = replace(
        two_path_scenario(), request=replace(two_path_scenario().request, policing=Policing.HARD)
    )
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    forward, _ = counted_flows(plan, scenario.ports.host("h1"), scenario.ports.host("h2"))
    upper, lower = forward.egress
    assert forward.meter is not None
    counters = {forward.entry: (30, 30_000), upper: (20, 20_000 + 80), lower: (5, 5_020)}
    tally = tally_of(forward, counters, {forward.meter: (5, 5_000)})
    assert (tally.offered_packets, tally.offered_bytes) == (30, 30_000)
    assert (tally.delivered_packets, tally.delivered_bytes) == (25, 25_100 - 25 * VLAN_TAG_BYTES)
    assert (tally.dropped_packets, tally.dropped_bytes) == (5, 5_000)
    with pytest.raises(InputError) as raised:
        tally_of(forward, counters, {})
    assert raised.value.field == "counters"
    with pytest.raises(InputError):
        tally_of(forward, {forward.entry: (1, 1)}, {forward.meter: (0, 0)})
