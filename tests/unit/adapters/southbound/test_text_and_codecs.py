"""ovs-ofctl text, JSON and os-ken messages all carry rule sets without loss."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.southbound import of13
from braid.adapters.southbound.codec import rule_set_from_json, rule_set_to_json
from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.ofctl_text import (
    flow_text,
    group_text,
    meter_text,
    parse_flow,
    parse_group,
    parse_meters,
)
from braid.core.errors import InputError
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import (
    IN_PORT,
    UNTAGGED,
    Bucket,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    Match,
    Meter,
    Output,
    Policing,
    PopVlan,
    PushVlan,
    RuleSet,
    Selection,
    SetQueue,
    SetVlan,
)
from tests.unit.core.rules.scenarios import Scenario, scenarios

# Lines printed by ovs-ofctl 3.1 (`--no-names --no-stats dump-flows`, `dump-groups`).
OVS_FLOWS = {
    " cookie=0xb7a1000000000001, priority=3000,ip,in_port=3,nw_src=10.0.0.1,nw_dst=10.0.0.2"
    " actions=group:183107584": FlowRule(
        3000,
        Match(in_port=3, eth_type=0x0800, ipv4_src="10.0.0.1", ipv4_dst="10.0.0.2"),
        (GroupAction(183107584),),
        0xB7A1000000000001,
    ),
    " cookie=0xb7a1000000000001, priority=2000,in_port=1,dl_vlan=1 actions=pop_vlan,output:3": (
        FlowRule(2000, Match(in_port=1, vlan_vid=1), (PopVlan(), Output(3)), 0xB7A1000000000001)
    ),
    " cookie=0x1, table=3, priority=2000,in_port=2,vlan_tci=0x0000/0x1fff actions=IN_PORT": (
        FlowRule(2000, Match(in_port=2, vlan_vid=UNTAGGED), (Output(IN_PORT),), 1, 3)
    ),
    " priority=5,tcp,in_port=2,dl_src=00:00:00:00:00:01,nw_src=10.0.0.0/24,tp_src=80"
    " actions=drop": FlowRule(
        5,
        Match(
            in_port=2,
            eth_type=0x0800,
            ip_proto=6,
            eth_src="00:00:00:00:00:01",
            ipv4_src="10.0.0.0/24",
            tp_src=80,
        ),
        (),
    ),
    " cookie=0x2, priority=2000,in_port=1,dl_vlan=5 actions=set_field:4102->vlan_vid,output:2": (
        FlowRule(2000, Match(in_port=1, vlan_vid=5), (SetVlan(6), Output(2)), 2)
    ),
    " cookie=0xb7a1000000000001, priority=3000,ip,nw_dst=10.0.0.2"
    " actions=meter:5,set_queue:7,output:1": FlowRule(
        3000,
        Match(eth_type=0x0800, ipv4_dst="10.0.0.2"),
        (SetQueue(7), Output(1)),
        0xB7A1000000000001,
        meter_id=5,
    ),
}
# `ovs-ofctl -O OpenFlow13 dump-meters` (3.1): a header line, then one line per band.
OVS_METERS = (
    "OFPST_METER_CONFIG reply (OF1.3) (xid=0x2):\n"
    "meter=5 kbps burst stats bands=\n"
    "type=drop rate=60000 burst_size=30000\n"
    "meter=6 kbps burst stats bands=\n"
    "type=drop rate=1000 burst_size=500\n"
    "meter=100000 pktps stats bands=\n"  # outside braid's ids: not braid's, not read
    "type=drop rate=10\n"
)
OVS_GROUPS = {
    " group_id=183107584,type=select,bucket=weight:3,actions=push_vlan:0x8100,"
    "set_field:4097->vlan_vid,output:1,bucket=actions=push_vlan:0x8100,"
    "set_field:4098->vlan_vid,output:2": Group(
        183107584,
        GroupKind.SELECT,
        (
            Bucket((PushVlan(1), Output(1)), weight=3),
            Bucket((PushVlan(2), Output(2)), weight=1),
        ),
    ),
    " group_id=7,type=ff,bucket=watch_port:1,actions=output:1,"
    "bucket=watch_port:3,actions=output:3": (
        Group(
            7,
            GroupKind.FAST_FAILOVER,
            (Bucket((Output(1),), watch_port=1), Bucket((Output(3),), watch_port=3)),
        )
    ),
}


@pytest.mark.parametrize(("line", "flow"), OVS_FLOWS.items())
def test_ovs_flow_dumps_read_back(line: str, flow: FlowRule) -> None:
    assert parse_flow(line) == flow


@pytest.mark.parametrize(("line", "group"), OVS_GROUPS.items())
def test_ovs_group_dumps_read_back(line: str, group: Group) -> None:
    assert parse_group(line) == group


@pytest.mark.parametrize(
    "line",
    [
        " priority=1,ip,nw_tos=4 actions=drop",
        " priority=1 actions=mod_nw_tos:4",
        " priority=1 actions=push_vlan:0x8100,output:1",
        " priority=1,in_port=1",
    ],
)
def test_what_braid_does_not_model_is_an_error_not_a_silent_loss(line: str) -> None:
    with pytest.raises(SouthboundError, match="cannot read"):
        parse_flow(line)


def test_ovs_meter_dumps_read_back() -> None:
    assert parse_meters(OVS_METERS) == [Meter(5, 60000, 30000), Meter(6, 1000, 500)]
    assert parse_meters("OFPST_METER_CONFIG reply (OF1.3) (xid=0x2):\n") == []


@pytest.mark.parametrize(
    "dump",
    [
        "meter=5 pktps burst stats bands=\ntype=drop rate=6 burst_size=3\n",
        "meter=5 kbps burst stats bands=\ntype=dscp_remark rate=6 burst_size=3 prec_level=1\n",
        "meter=5 kbps burst stats bands=\n"
        "type=drop rate=6 burst_size=3\ntype=drop rate=9 burst_size=3\n",
        "meter=5 kbps burst stats bands=\n",
    ],
)
def test_meters_braid_does_not_model_are_an_error(dump: str) -> None:
    with pytest.raises(SouthboundError, match="cannot read"):
        parse_meters(dump)


def test_a_meter_text_reads_back_as_dumped() -> None:
    meter = Meter(9, 60000, 30000)
    assert meter_text(meter) == (
        "meter=9,kbps,burst,stats,bands=type=drop,rate=60000,burst_size=30000"
    )
    dumped = "meter=9 kbps burst stats bands=\ntype=drop rate=60000 burst_size=30000\n"
    assert parse_meters(dumped) == [meter]


def _rule_sets(scenario: Scenario) -> tuple[RuleSet, ...]:
    return compile_reservation(scenario.request, scenario.topology, scenario.ports).rule_sets()


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.sampled_from([None, Policing.SOFT, Policing.HARD]))
def test_compiled_rules_survive_ovs_ofctl_text(
    scenario: Scenario, policing: Policing | None
) -> None:
    scenario = replace(scenario, request=replace(scenario.request, policing=policing))
    for rule_set in _rule_sets(scenario):
        for flow in rule_set.flows:
            head, _, actions = flow_text(flow).rpartition(",actions=")
            assert parse_flow(f"{head} actions={actions}") == flow
        for group in rule_set.groups:
            assert parse_group(group_text(group)) == group


def test_per_packet_groups_are_refused_for_open_vswitch() -> None:
    group = Group(1, GroupKind.SELECT, (Bucket((Output(1),)),), Selection.PACKET)
    with pytest.raises(InputError, match="per-packet"):
        group_text(group)


@settings(max_examples=40, deadline=None)
@given(scenarios(selection=Selection.PACKET))
def test_compiled_rules_survive_json(scenario: Scenario) -> None:
    for rule_set in _rule_sets(scenario):
        assert rule_set_from_json(rule_set_to_json(rule_set)) == rule_set


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([], "rule_set"),
        ({"dpid": 1}, "rule_set.switch"),
        ({"switch": "s1", "dpid": "1"}, "rule_set.dpid"),
        (
            {"switch": "s1", "dpid": 1, "flows": [{"priority": 1, "match": {"vlan": 1}}]},
            "match.vlan",
        ),
        (
            {"switch": "s1", "dpid": 1, "flows": [{"priority": 1, "actions": [{"type": "x"}]}]},
            "actions[0].type",
        ),
    ],
)
def test_bad_json_names_the_field(data: Any, field: str) -> None:
    with pytest.raises(InputError) as error:
        rule_set_from_json(data)
    assert error.value.field.endswith(field)


def _datapath() -> Any:
    from os_ken.ofproto import ofproto_v1_3, ofproto_v1_3_parser

    return SimpleNamespace(ofproto=ofproto_v1_3, ofproto_parser=ofproto_v1_3_parser)


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.sampled_from([None, Policing.SOFT, Policing.HARD]))
def test_compiled_rules_survive_os_ken_messages(
    scenario: Scenario, policing: Policing | None
) -> None:
    pytest.importorskip("os_ken")
    scenario = replace(scenario, request=replace(scenario.request, policing=policing))
    datapath = _datapath()
    parser, ofp = datapath.ofproto_parser, datapath.ofproto
    for rule_set in _rule_sets(scenario):
        for flow in rule_set.flows:
            mod = of13.flow_mod(datapath, flow)
            stats = parser.OFPFlowStats(
                table_id=mod.table_id,
                priority=mod.priority,
                cookie=mod.cookie,
                match=mod.match,
                instructions=mod.instructions,
            )
            assert of13.flow_from_stats(stats) == flow
        for group in rule_set.groups:
            mod = of13.group_mod(datapath, group, "add")
            desc = parser.OFPGroupDescStats(mod.type, mod.group_id, mod.buckets)
            assert of13.group_from_desc(desc, ofp.OFPP_ANY) == group
        for meter in rule_set.meters:
            mod = of13.meter_mod(datapath, meter, "add")
            config = parser.OFPMeterConfigStats(mod.flags, mod.meter_id, mod.bands)
            assert of13.meter_from_config(config, ofp) == meter


def test_os_ken_meters_outside_braids_ids_are_not_braids_and_others_are_refused() -> None:
    pytest.importorskip("os_ken")
    datapath = _datapath()
    parser, ofp = datapath.ofproto_parser, datapath.ofproto
    band = parser.OFPMeterBandDrop(rate=10, burst_size=5)
    assert of13.meter_from_config(parser.OFPMeterConfigStats(1, 0x20000, [band]), ofp) is None
    with pytest.raises(ValueError, match="meter 5"):
        of13.meter_from_config(parser.OFPMeterConfigStats(ofp.OFPMF_PKTPS, 5, [band]), ofp)


def test_os_ken_matches_keep_prefixes_ports_and_untagged() -> None:
    pytest.importorskip("os_ken")
    parser = _datapath().ofproto_parser
    match = Match(eth_type=0x0800, ip_proto=17, ipv4_dst="10.1.0.0/16", tp_dst=53, vlan_vid=0)
    assert of13.match_from_of(of13.match_to_of(parser, match)) == match
