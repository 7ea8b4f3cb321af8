"""The compiled rules, run on fake switches, carry exactly the reservation's traffic."""

from __future__ import annotations

import dataclasses
from collections import Counter
from math import sqrt

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.rules.changes import removal_steps
from braid.core.rules.compiler import bucket_weights
from braid.core.rules.model import ETH_TYPE_ARP, RulePlan, Selection
from braid.testing.fake_network import Delivery
from braid.testing.fake_switch import Packet
from tests.unit.core.rules.scenarios import (
    BYSTANDER_IP,
    DST_IP,
    SRC_IP,
    Scenario,
    installed,
    only,
    run,
    scenarios,
    tcp,
)


def path_of(scenario: Scenario, plan: RulePlan, delivery: Delivery) -> int:
    """Which allocation carried the packet; checks the links and labels match that path."""
    vlans = set(delivery.vlans)
    assert len(vlans) == 1, f"label changed on the way: {delivery.vlans}"
    index = plan.vlans.index(vlans.pop())
    links = scenario.request.allocations[index].path.links
    assert delivery.links in (links, links[::-1])
    assert delivery.packet.vlan is None, "delivered with its label still on"
    return index


@settings(max_examples=60, deadline=None)
@given(scenarios(standby=False), st.lists(st.integers(1024, 65535), min_size=1, max_size=20))
def test_every_flow_reaches_the_other_host_over_one_path_both_ways(
    scenario: Scenario, sports: list[int]
) -> None:
    network, plan = installed(scenario)
    for sport in sports:
        there = only(network.send("h1", tcp(SRC_IP, DST_IP, sport, 5201)), "h2")
        back = only(network.send("h2", tcp(DST_IP, SRC_IP, 5201, sport)), "h1")
        assert path_of(scenario, plan, there) == path_of(scenario, plan, back)
        assert back.links == there.links[::-1]


@settings(max_examples=30, deadline=None)
@given(scenarios(standby=False))
def test_flows_spread_over_paths_in_proportion_to_shares(scenario: Scenario) -> None:
    network, plan = installed(scenario)
    flows = 3000
    counts: Counter[int] = Counter()
    for i in range(flows):
        sport = 1024 + i % 60000
        ip_last = 1 + i // 60000
        packet = tcp(SRC_IP, DST_IP, sport, 5000 + ip_last)
        counts[path_of(scenario, plan, only(network.send("h1", packet), "h2"))] += 1
    weights = bucket_weights([a.bandwidth for a in scenario.request.allocations])
    for index, weight in enumerate(weights):
        p = weight / sum(weights)
        # Binomial spread: 5 standard deviations, so a correct hash fails ~1 in 10^6 runs.
        assert abs(counts[index] - flows * p) <= 5 * sqrt(flows * p * (1 - p)) + 1


@settings(max_examples=30, deadline=None)
@given(scenarios(standby=False, selection=Selection.PACKET))
def test_packet_split_gives_exact_proportions(scenario: Scenario) -> None:
    network, plan = installed(scenario)
    weights = bucket_weights([a.bandwidth for a in scenario.request.allocations])
    rounds = 3
    counts: Counter[int] = Counter()
    for _ in range(rounds * sum(weights)):
        delivery = only(network.send("h1", tcp(SRC_IP, DST_IP, 40000, 5201)), "h2")
        counts[path_of(scenario, plan, delivery)] += 1
    assert [counts[i] for i in range(len(weights))] == [rounds * w for w in weights]


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_arp_between_the_hosts_is_carried_both_ways(scenario: Scenario) -> None:
    network, _ = installed(scenario)
    request = Packet(0, eth_type=ETH_TYPE_ARP, arp_spa=SRC_IP, arp_tpa=DST_IP)
    reply = Packet(0, eth_type=ETH_TYPE_ARP, arp_spa=DST_IP, arp_tpa=SRC_IP)
    only(network.send("h1", request), "h2")
    only(network.send("h2", reply), "h1")


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_nothing_else_matches(scenario: Scenario) -> None:
    network, _ = installed(scenario)
    strangers = [
        ("h1", tcp(SRC_IP, BYSTANDER_IP, 1, 2)),
        ("h3", tcp(BYSTANDER_IP, DST_IP, 1, 2)),
        ("h3", tcp(SRC_IP, DST_IP, 1, 2)),  # right addresses, wrong port
        ("h2", tcp(BYSTANDER_IP, SRC_IP, 1, 2)),
        ("h1", Packet(0, eth_type=0x86DD)),
        ("h1", Packet(0, eth_type=ETH_TYPE_ARP, arp_spa=SRC_IP, arp_tpa=BYSTANDER_IP)),
    ]
    for host, packet in strangers:
        assert network.send(host, packet) == []
        attach = scenario.ports.host(host)
        switch = network.switches[attach.switch]
        assert switch.lookup(dataclasses.replace(packet, in_port=attach.port)) is None


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_removal_leaves_empty_tables(scenario: Scenario) -> None:
    network, plan = installed(scenario)
    assert any(not r.empty for r in network.dump().values())
    run(network, removal_steps(plan))
    assert all(r.empty for r in network.dump().values())
    assert network.send("h1", tcp(SRC_IP, DST_IP, 1234, 5201)) == []


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_tables_hold_exactly_the_plan(scenario: Scenario) -> None:
    network, plan = installed(scenario)
    tables = {s: r for s, r in network.dump().items() if not r.empty}
    assert tables == {r.switch: r for r in plan.rule_sets()}
