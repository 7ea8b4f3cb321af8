"""The compiler's shape (TALON Algorithm 2), labels, weights and input errors."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.rules.compiler import (
    ENTRY_PRIORITY,
    LABEL_PRIORITY,
    bucket_weights,
    compile_reservation,
)
from braid.core.rules.labels import LabelPool, reservation_cookie
from braid.core.rules.model import (
    BRAID_COOKIE_MASK,
    BRAID_COOKIE_TAG,
    Bucket,
    FlowRule,
    GroupAction,
    GroupKind,
    Match,
    Output,
    PopVlan,
    PushVlan,
    RuleSet,
)
from tests.unit.core.rules.scenarios import two_path_scenario


def test_two_paths_compile_to_a_weighted_select_group_core_and_egress_rules() -> None:
    scenario = two_path_scenario()
    ports = scenario.ports
    plan = compile_reservation(scenario.request, scenario.topology, ports)
    assert plan.vlans == (1, 2)
    assert plan.standby_vlan is None
    tables = {r.switch: r for r in plan.rule_sets()}
    ingress = tables["s1"]
    (select, reverse_select) = (tables["s1"].groups[0], tables["s3"].groups[0])
    assert select.kind is GroupKind.SELECT and reverse_select.kind is GroupKind.SELECT
    assert [b.weight for b in select.buckets] == [3, 1]
    assert select.buckets[0].actions == (PushVlan(1), Output(ports.link_port("s1", "l12")))
    entry = [f for f in ingress.flows if f.priority == ENTRY_PRIORITY]
    assert GroupAction(select.group_id) in [a for f in entry for a in f.actions]
    # s2 carries VLAN 1 both ways, s4 VLAN 2 both ways, and nothing else.
    core = {(f.match.in_port, f.match.vlan_vid, f.actions) for f in tables["s2"].flows}
    p12, p23 = ports.link_port("s2", "l12"), ports.link_port("s2", "l23")
    assert core == {(p12, 1, (Output(p23),)), (p23, 1, (Output(p12),))}
    egress = [f for f in tables["s3"].flows if f.priority == LABEL_PRIORITY]
    host = ports.host("h2").port
    assert {f.actions for f in egress} == {(PopVlan(), Output(host))}
    assert {f.match.vlan_vid for f in egress} == {1, 2}
    assert all(f.cookie == plan.cookie for r in plan.rule_sets() for f in r.flows)


def test_a_standby_path_puts_each_bucket_behind_a_fast_failover_group() -> None:
    scenario = two_path_scenario(standby=True)
    ports = scenario.ports
    plan = compile_reservation(scenario.request, scenario.topology, ports)
    assert plan.standby_vlan == 3
    groups = {g.group_id: g for g in next(r for r in plan.rule_sets() if r.switch == "s1").groups}
    select = next(g for g in groups.values() if g.kind is GroupKind.SELECT)
    first_ff = groups[select.buckets[0].actions[0].group_id]  # type: ignore[union-attr]
    direct = ports.link_port("s1", "l13")
    assert first_ff.kind is GroupKind.FAST_FAILOVER
    assert first_ff.buckets == (
        Bucket((PushVlan(1), Output(ports.link_port("s1", "l12"))), watch_port=1),
        Bucket((PushVlan(3), Output(direct)), watch_port=direct),
    )


def test_labels_come_lowest_first_from_the_pool_and_skip_those_in_use() -> None:
    scenario = two_path_scenario()
    pool = LabelPool(vlans=range(100, 200), vlans_in_use=frozenset({100, 102}))
    first = compile_reservation(scenario.request, scenario.topology, scenario.ports, pool)
    assert first.vlans == (101, 103)
    again = compile_reservation(scenario.request, scenario.topology, scenario.ports, pool)
    assert again == first
    second = compile_reservation(
        scenario.request, scenario.topology, scenario.ports, pool.with_plans([first])
    )
    assert second.vlans == (104, 105)
    assert set(second.group_ids).isdisjoint(first.group_ids)


def test_an_exhausted_pool_is_a_clear_error() -> None:
    scenario = two_path_scenario()
    with pytest.raises(InputError, match=r"VLAN pool: exhausted: need 2, 1 free in 10\.\.10"):
        compile_reservation(
            scenario.request, scenario.topology, scenario.ports, LabelPool(vlans=range(10, 11))
        )


def test_cookies_carry_braids_tag_and_differ_per_reservation() -> None:
    assert reservation_cookie("a") & BRAID_COOKIE_MASK == BRAID_COOKIE_TAG
    assert reservation_cookie("a") != reservation_cookie("b")


@given(st.lists(st.integers(1, 10**11), min_size=1, max_size=6))
def test_bucket_weights_keep_the_shares_within_16_bits(bandwidths: list[int]) -> None:
    weights = bucket_weights(bandwidths)
    assert all(1 <= w <= 0xFFFF for w in weights)
    total_bw, total_w = sum(bandwidths), sum(weights)
    for bw, w in zip(bandwidths, weights, strict=True):
        assert abs(w / total_w - bw / total_bw) < 2 * len(bandwidths) / 0xFFFF + 1e-9


def test_exact_weights_when_they_fit() -> None:
    assert bucket_weights([300_000_000, 100_000_000, 200_000_000]) == (3, 1, 2)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"allocations": ()}, "allocations"),
        ({"dst_host": "h1"}, "dst_host"),
        ({"dst_host": "nobody"}, "ports.hosts"),
        ({"standby": Path(("s1", "s3"), ("l12",))}, "standby"),
    ],
)
def test_bad_requests_name_the_field(change: dict[str, object], field: str) -> None:
    scenario = two_path_scenario()
    request = dataclasses.replace(scenario.request, **change)  # type: ignore[arg-type]
    with pytest.raises(InputError) as error:
        compile_reservation(request, scenario.topology, scenario.ports)
    assert error.value.field == field


def test_a_path_the_wrong_way_round_is_refused() -> None:
    scenario = two_path_scenario()
    backwards = Allocation(Path(("s3", "s2", "s1"), ("l23", "l12")), 1)
    request = dataclasses.replace(scenario.request, allocations=(backwards,))
    with pytest.raises(InputError, match=r"allocations\[0\]\.path: path runs s3->s1"):
        compile_reservation(request, scenario.topology, scenario.ports)


def test_a_missing_port_names_the_switch_and_link() -> None:
    scenario = two_path_scenario()
    s2 = scenario.ports.switches["s2"]
    broken = dataclasses.replace(s2, link_ports={"l12": 1})
    ports = dataclasses.replace(scenario.ports, switches={**scenario.ports.switches, "s2": broken})
    with pytest.raises(InputError, match=r"ports\.switches\.s2: no port for link 'l23'"):
        compile_reservation(scenario.request, scenario.topology, ports)


def test_rule_sets_are_canonical_and_refuse_conflicts() -> None:
    a = FlowRule(10, Match(in_port=1), (Output(2),))
    b = FlowRule(20, Match(in_port=2), (Output(1),))
    assert RuleSet.of("s", 1, [a, b]) == RuleSet.of("s", 1, [b, a, b])
    with pytest.raises(InputError, match="two different rules"):
        RuleSet.of("s", 1, [a, FlowRule(10, Match(in_port=1), ())])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"vlan_vid": 4095}, "match.vlan_vid"),
        ({"ipv4_src": "10.0.0.1"}, "IPv4 fields need eth_type"),
        ({"eth_type": 0x0800, "ipv4_src": "10.0.0.300"}, "match.ipv4_src"),
        ({"eth_type": 0x0800, "tp_src": 80}, "transport ports need"),
        ({"eth_src": "zz"}, "match.eth_src"),
    ],
)
def test_bad_matches_name_the_field(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Match(**fields)  # type: ignore[arg-type]


def test_addresses_are_kept_canonical() -> None:
    match = Match(eth_type=0x0800, ipv4_src="10.0.0.1/32", eth_dst="AA:bb:CC:00:00:01")
    assert match.ipv4_src == "10.0.0.1"
    assert match.eth_dst == "aa:bb:cc:00:00:01"
