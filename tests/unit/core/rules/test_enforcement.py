"""Enforcement in the compiled rules: meters at the ingress edge, a queue per path share on
every port a path leaves by, installed and removed with the reservation."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.southbound.codec import rule_set_from_json, rule_set_to_json
from braid.core.errors import InputError
from braid.core.rules.changes import install_steps, make_before_break, removal_steps
from braid.core.rules.compiler import ENTRY_PRIORITY, compile_reservation, meter_id_of
from braid.core.rules.enforcement import (
    METER_BURST_SECONDS,
    Meter,
    Policing,
    Queue,
    meter_kbps,
    parse_policing,
)
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import ETH_TYPE_IPV4, RulePlan, SetQueue
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import UnknownMeterError
from tests.unit.core.rules.scenarios import (
    DST_IP,
    SRC_IP,
    Scenario,
    run,
    scenarios,
    tcp,
    two_path_scenario,
)

policings = st.sampled_from([Policing.SOFT, Policing.HARD])


def _enforced(scenario: Scenario, policing: Policing) -> Scenario:
    return dataclasses.replace(
        scenario, request=dataclasses.replace(scenario.request, policing=policing)
    )


def _compiled(scenario: Scenario) -> RulePlan:
    return compile_reservation(scenario.request, scenario.topology, scenario.ports)


@settings(max_examples=60, deadline=None)
@given(scenarios(standby=False), policings)
def test_every_port_a_path_leaves_by_holds_that_share_in_its_own_queue(
    scenario: Scenario, policing: Policing
) -> None:
    scenario = _enforced(scenario, policing)
    plan = _compiled(scenario)
    queues = {(rs.switch, q.key): q for rs in plan.rule_sets() for q in rs.queues}
    expected = {}
    for allocation, vlan in zip(scenario.request.allocations, plan.vlans, strict=True):
        path = allocation.path
        for nodes, links in ((path.nodes, path.links), (path.nodes[::-1], path.links[::-1])):
            for node, link in zip(nodes, links, strict=False):
                line = scenario.topology.links[link].capacity
                share = min(allocation.bandwidth, line)
                ceiling = share if policing is Policing.HARD else line
                port = scenario.ports.link_port(node, link)
                expected[(node, (port, vlan))] = Queue(port, vlan, share, ceiling, line)
    assert queues == expected


@settings(max_examples=60, deadline=None)
@given(scenarios(standby=False), policings)
def test_hard_reservations_meter_their_entry_rules_at_the_booked_rate(
    scenario: Scenario, policing: Policing
) -> None:
    scenario = _enforced(scenario, policing)
    plan = _compiled(scenario)
    entry = [f for rs in plan.entry for f in rs.flows if f.match.eth_type == ETH_TYPE_IPV4]
    meters = [m for rs in plan.rule_sets() for m in rs.meters]
    assert len(entry) == 2  # one per direction
    if policing is Policing.SOFT:
        assert meters == [] and all(f.meter_id is None for f in entry)
        return
    rate = meter_kbps(sum(a.bandwidth for a in scenario.request.allocations))
    assert {m.rate_kbps for m in meters} == {rate}
    assert {m.burst_kbits for m in meters} == {int(rate * METER_BURST_SECONDS)}
    assert sorted(f.meter_id for f in entry if f.meter_id) == sorted(m.meter_id for m in meters)
    assert {meter_id_of(g) for g in plan.group_ids} >= {m.meter_id for m in meters}


@settings(max_examples=40, deadline=None)
@given(scenarios(standby=False), policings)
def test_traffic_crosses_every_link_in_its_paths_queue_and_removal_leaves_nothing(
    scenario: Scenario, policing: Policing
) -> None:
    scenario = _enforced(scenario, policing)
    plan = _compiled(scenario)
    network = FakeNetwork(scenario.topology, scenario.ports)
    run(network, install_steps(plan))
    for sport in range(20):
        for src, dst, host in ((SRC_IP, DST_IP, "h1"), (DST_IP, SRC_IP, "h2")):
            (arrived,) = network.send(host, tcp(src, dst, 40000 + sport, 5201))
            assert arrived.queues == arrived.vlans  # the queue id is the path's VLAN
            assert all(q is not None for q in arrived.queues)
    run(network, removal_steps(plan))
    assert all(rs.empty for rs in network.dump().values())


def test_a_step_change_rewrites_meters_and_queues_in_place_and_break_removes_the_old_ones() -> None:
    scenario = _enforced(two_path_scenario(), Policing.HARD)
    old = _compiled(scenario)
    faster = tuple(
        dataclasses.replace(a, bandwidth=a.bandwidth * 2) for a in scenario.request.allocations
    )
    pool = LabelPool().with_plans([old])
    request = dataclasses.replace(scenario.request, allocations=faster)
    new = compile_reservation(request, scenario.topology, scenario.ports, pool)
    network = FakeNetwork(scenario.topology, scenario.ports)
    run(network, install_steps(old))
    run(network, make_before_break(old, new))
    held = {s: rs for s, rs in network.dump().items() if not rs.empty}
    assert held == {rs.switch: rs for rs in new.rule_sets()}
    assert {m.rate_kbps for rs in held.values() for m in rs.meters} == {800_000}


def test_the_rules_name_the_queue_before_they_send() -> None:
    plan = _compiled(_enforced(two_path_scenario(), Policing.SOFT))
    for rs in plan.rule_sets():
        for flow in rs.flows:
            if flow.priority == ENTRY_PRIORITY:
                continue
            kinds = [type(a) for a in flow.actions]
            if SetQueue in kinds:
                assert kinds.index(SetQueue) == len(kinds) - 2  # right before the output


def test_without_policing_the_rules_only_route() -> None:
    plan = _compiled(two_path_scenario())
    assert all(not rs.meters and not rs.queues for rs in plan.rule_sets())
    assert all(
        not isinstance(a, SetQueue) for rs in plan.rule_sets() for f in rs.flows for a in f.actions
    )


def test_a_flow_naming_a_missing_meter_is_refused_and_deleting_a_meter_deletes_its_flows() -> None:
    scenario = _enforced(two_path_scenario(), Policing.HARD)
    plan = _compiled(scenario)
    network = FakeNetwork(scenario.topology, scenario.ports)
    entry_only = next(rs for rs in plan.entry if rs.switch == "s1")
    with pytest.raises(UnknownMeterError):
        network.apply(entry_only)
    run(network, install_steps(plan))
    s1 = network.dump()["s1"]
    network.remove(dataclasses.replace(s1, flows=(), groups=(), queues=()))
    assert not [f for f in network.dump()["s1"].flows if f.meter_id is not None]


def test_meters_and_queues_survive_the_json_codec() -> None:
    plan = _compiled(_enforced(two_path_scenario(), Policing.HARD))
    for rs in plan.rule_sets():
        assert rule_set_from_json(rule_set_to_json(rs)) == rs


def test_bad_enforcement_input_names_the_field() -> None:
    with pytest.raises(InputError, match="policing"):
        parse_policing("strict")
    with pytest.raises(InputError, match=r"queue\.min_rate"):
        Queue(1, 7, 20, 10, 100)
    with pytest.raises(InputError, match=r"queue\.queue_id"):
        Queue(1, 0, 1, 1, 1)
    with pytest.raises(InputError, match=r"meter\.meter_id"):
        Meter(0, 1, 1)
    assert (
        meter_kbps(1) == 1 and meter_kbps(60_000_000) == 60_000 and meter_kbps(60_000_001) == 60_001
    )
