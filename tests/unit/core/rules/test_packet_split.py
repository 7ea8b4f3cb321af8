"""Packet splitting: the rules carry every path's tagged frames; the edges match the plan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from braid.core.errors import InputError
from braid.core.multipath import SplitPlan, split_fixed
from braid.core.rules.changes import install_steps, removal_steps
from braid.core.rules.model import ETH_TYPE_ARP, RuleRequest, Selection
from braid.core.rules.packet_split import PacketSplitPlan, compile_packet_split
from braid.core.rules.reseq_sizing import size_resequencer
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import Packet
from tests.unit.core.multipath.nets import M, two_links
from tests.unit.core.rules.scenarios import (
    BYSTANDER_IP,
    DST_IP,
    SRC_IP,
    Scenario,
    only,
    port_map,
    run,
    scenarios,
    tcp,
    two_path_scenario,
)


def installed(
    scenario: Scenario, *, resequence: bool = True
) -> tuple[FakeNetwork, PacketSplitPlan]:
    plan = compile_packet_split(
        scenario.request, scenario.topology, scenario.ports, resequence=resequence
    )
    network = FakeNetwork(scenario.topology, scenario.ports)
    run(network, install_steps(plan.rules))
    return network, plan


def tagged(packet: Packet, vlan: int) -> Packet:
    return Packet(**{**{f: getattr(packet, f) for f in Packet.__slots__}, "vlan": vlan})


@settings(max_examples=60, deadline=None)
@given(scenarios(standby=False))
def test_each_paths_tagged_frames_reach_the_far_edge_over_that_path_both_ways(
    scenario: Scenario,
) -> None:
    network, plan = installed(scenario)
    for allocation, vlan in zip(scenario.request.allocations, plan.rules.vlans, strict=True):
        there = only(network.send("h1", tagged(tcp(SRC_IP, DST_IP, 40000, 5201), vlan)), "h2")
        back = only(network.send("h2", tagged(tcp(DST_IP, SRC_IP, 5201, 40000), vlan)), "h1")
        assert there.links == allocation.path.links
        assert back.links == allocation.path.links[::-1]
        # The tag stays on: the receiving edge tells paths apart by it, then pops it.
        assert there.packet.vlan == vlan and back.packet.vlan == vlan
        assert set(there.vlans) == {vlan}


@settings(max_examples=30, deadline=None)
@given(scenarios(standby=False))
def test_untagged_traffic_and_bystanders_go_nowhere_and_removal_leaves_nothing(
    scenario: Scenario,
) -> None:
    network, plan = installed(scenario)
    assert network.send("h1", tcp(SRC_IP, DST_IP, 40000, 5201)) == []
    vlan = plan.rules.vlans[0]
    assert network.send("h3", tagged(tcp(BYSTANDER_IP, DST_IP, 1, 2), vlan)) == []
    run(network, removal_steps(plan.rules))
    assert all(s.empty for s in network.dump().values())


def test_arp_crosses_on_the_first_path_tagged_for_the_far_edge() -> None:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    arp = Packet(0, eth_type=ETH_TYPE_ARP, arp_spa=SRC_IP, arp_tpa=DST_IP)
    delivered = only(network.send("h1", arp), "h2")
    assert delivered.packet.vlan == plan.rules.vlans[0]
    assert delivered.links == scenario.request.allocations[0].path.links


def test_edges_mirror_each_other_and_carry_the_plans_weights() -> None:
    _, plan = installed(two_path_scenario(), resequence=True)
    a, b = plan.edges
    assert (a.host, a.src_ipv4, a.dst_ipv4) == ("h1", SRC_IP, DST_IP)
    assert (b.host, b.src_ipv4, b.dst_ipv4) == ("h2", DST_IP, SRC_IP)
    assert a.vlans == b.vlans == plan.rules.vlans
    assert a.weights == b.weights == (0.75, 0.25)  # 300 and 100 Mbit/s
    assert a.resequence and b.resequence
    assert plan.rules.group_ids == ()  # no select group: the edge does the round robin


def test_a_packet_mode_split_plan_compiles_to_matching_edges() -> None:
    """From `split_fixed` (mode packet, 25 and 50 ms: MDI 0.167) to the edges' config."""
    net = two_links(25, 50)
    split = split_fixed(net, "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet")
    assert isinstance(split, SplitPlan) and split.resequence
    ports = port_map(net.topology, {"h1": ("A", SRC_IP), "h2": ("B", DST_IP)})
    request = RuleRequest("r1", split.allocations, "h1", "h2", selection=Selection.PACKET)
    plan = compile_packet_split(request, net.topology, ports, resequence=split.resequence)
    for edge in plan.edges:
        assert edge.weights == pytest.approx(split.weights)
        assert edge.resequence is split.resequence
        assert edge.reseq == size_resequencer([25, 50], split.total)
        assert edge.reseq.basis == "declared"


def test_flow_mode_plans_say_no_resequencing() -> None:
    split = split_fixed(two_links(25, 50), "A", "B", 150 * M, 0, 10, max_paths=2, mode="flow")
    assert isinstance(split, SplitPlan) and not split.resequence


def test_sizing_from_declared_and_measured_delays() -> None:
    declared = size_resequencer([25, 50], 20 * M)
    # spread 25 ms + 0.25 x 50 ms + 2 ms = 39.5 ms; at 20 Mbit/s, 1448-byte segments: 69 + 2
    assert declared.spread_ms == 39.5
    assert (declared.threshold, declared.buffer_size, declared.lrf) == (71, 142, 20)
    assert declared.hold_ms == 84.0
    measured = size_resequencer([30, 61], 20 * M, measured=True, burst=4)
    assert measured.spread_ms == 33.0 and measured.basis == "measured"
    assert measured.threshold == 57 + 8
    assert size_resequencer([40, 40], 10 * M).threshold > 2  # margin even for equal paths


def test_measured_delays_are_used_when_given() -> None:
    scenario = two_path_scenario()
    plan = compile_packet_split(
        scenario.request,
        scenario.topology,
        scenario.ports,
        resequence=True,
        measured_one_way_ms=[10.0, 20.0],
    )
    assert plan.edges[0].reseq.basis == "measured"
    assert plan.edges[0].reseq.spread_ms == 12.0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"standby": two_path_scenario().request.allocations[0].path}, "standby"),
        ({"allocations": ()}, "allocations"),
    ],
)
def test_bad_requests_are_refused(change: dict[str, object], field: str) -> None:
    scenario = two_path_scenario()
    fields = {f: getattr(scenario.request, f) for f in RuleRequest.__slots__}
    request = RuleRequest(**{**fields, **change})
    with pytest.raises(InputError) as caught:
        compile_packet_split(request, scenario.topology, scenario.ports, resequence=True)
    assert caught.value.field == field


def test_sizing_refuses_nonsense() -> None:
    with pytest.raises(InputError):
        size_resequencer([], M)
    with pytest.raises(InputError):
        size_resequencer([1.0], 0)
