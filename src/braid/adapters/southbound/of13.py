"""braid's rule model to and from os-ken's OpenFlow 1.3 message objects.

Used only inside the `braid controller` process. os-ken is untyped, so the
parser objects are `Any` here; the model side is fully typed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any, Final

from braid.adapters.southbound.switch_stats import FlowCount
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.enforcement import BRAID_METER_IDS
from braid.core.rules.model import (
    UNTAGGED,
    Action,
    Bucket,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    Match,
    Meter,
    Output,
    PopVlan,
    PushVlan,
    SetQueue,
    SetVlan,
)

__all__ = [
    "flow_count_from_stats",
    "flow_delete",
    "flow_from_stats",
    "flow_mod",
    "flow_stats_request",
    "group_from_desc",
    "group_mod",
    "match_to_of",
    "meter_counts_from_stats",
    "meter_delete",
    "meter_from_config",
    "meter_mod",
    "meter_stats_request",
    "packet_out",
]

VLAN_PRESENT: Final = 0x1000
_PLAIN: Final = ("in_port", "eth_type", "eth_src", "eth_dst", "ip_proto")
_ADDRESSES: Final = ("ipv4_src", "ipv4_dst", "arp_spa", "arp_tpa")
_GROUP_TYPES: Final = {
    GroupKind.ALL: 0,
    GroupKind.SELECT: 1,
    GroupKind.INDIRECT: 2,
    GroupKind.FAST_FAILOVER: 3,
}
_PORT_FIELDS: Final = {6: ("tcp_src", "tcp_dst"), 17: ("udp_src", "udp_dst")}


def _address_to_of(text: str) -> str | tuple[str, str]:
    net = ipaddress.IPv4Network(text)
    return (
        str(net.network_address)
        if net.prefixlen == 32
        else (str(net.network_address), str(net.netmask))
    )


def _address_from_of(value: Any) -> str:
    if isinstance(value, tuple):
        return str(ipaddress.IPv4Network(f"{value[0]}/{value[1]}"))
    return str(value)


def match_to_of(parser: Any, match: Match) -> Any:
    fields: dict[str, Any] = {}
    for name in _PLAIN:
        if getattr(match, name) is not None:
            fields[name] = getattr(match, name)
    if match.vlan_vid is not None:
        fields["vlan_vid"] = 0 if match.vlan_vid == UNTAGGED else match.vlan_vid | VLAN_PRESENT
    for name in _ADDRESSES:
        value = getattr(match, name)
        if value is not None:
            fields[name] = _address_to_of(value)
    if match.ip_proto in _PORT_FIELDS:
        src, dst = _PORT_FIELDS[match.ip_proto]
        if match.tp_src is not None:
            fields[src] = match.tp_src
        if match.tp_dst is not None:
            fields[dst] = match.tp_dst
    return parser.OFPMatch(**fields)


def match_from_of(of_match: Any) -> Match:
    items = dict(of_match.items())
    fields: dict[str, Any] = {name: items[name] for name in _PLAIN if name in items}
    if "vlan_vid" in items:
        vid = items["vlan_vid"]
        if isinstance(vid, tuple):
            raise ValueError(f"braid does not model masked VLAN matches: {vid}")
        fields["vlan_vid"] = UNTAGGED if vid == 0 else vid & ~VLAN_PRESENT
    for name in _ADDRESSES:
        if name in items:
            fields[name] = _address_from_of(items[name])
    for src, dst in _PORT_FIELDS.values():
        if src in items:
            fields["tp_src"] = items[src]
        if dst in items:
            fields["tp_dst"] = items[dst]
    unknown = set(items) - set(_PLAIN) - set(_ADDRESSES) - {"vlan_vid"}
    unknown -= {f for pair in _PORT_FIELDS.values() for f in pair}
    if unknown:
        raise ValueError(f"braid does not model match field {sorted(unknown)[0]!r}")
    return Match(**fields)


def actions_to_of(parser: Any, actions: Iterable[Action]) -> list[Any]:
    result: list[Any] = []
    for action in actions:
        if isinstance(action, Output):
            result.append(parser.OFPActionOutput(action.port))
        elif isinstance(action, PushVlan):
            result.append(parser.OFPActionPushVlan(0x8100))
            result.append(parser.OFPActionSetField(vlan_vid=action.vid | VLAN_PRESENT))
        elif isinstance(action, SetVlan):
            result.append(parser.OFPActionSetField(vlan_vid=action.vid | VLAN_PRESENT))
        elif isinstance(action, PopVlan):
            result.append(parser.OFPActionPopVlan())
        elif isinstance(action, SetQueue):
            result.append(parser.OFPActionSetQueue(action.queue_id))
        else:
            result.append(parser.OFPActionGroup(action.group_id))
    return result


def actions_from_of(of_actions: Iterable[Any]) -> tuple[Action, ...]:
    result: list[Action] = []
    pushed = False
    for action in of_actions:
        name = type(action).__name__
        if name == "OFPActionPushVlan":
            pushed = True
        elif name == "OFPActionSetField" and action.key == "vlan_vid":
            vid = action.value & ~VLAN_PRESENT
            result.append(PushVlan(vid) if pushed else SetVlan(vid))
            pushed = False
        elif name == "OFPActionPopVlan":
            result.append(PopVlan())
        elif name == "OFPActionOutput":
            result.append(Output(action.port))
        elif name == "OFPActionGroup":
            result.append(GroupAction(action.group_id))
        elif name == "OFPActionSetQueue":
            result.append(SetQueue(action.queue_id))
        else:
            raise ValueError(f"braid does not model action {name}")
    if pushed:
        raise ValueError("push_vlan without a VLAN id")
    return tuple(result)


def flow_mod(datapath: Any, flow: FlowRule) -> Any:
    """An OFPFC_ADD for `flow` (replaces an entry with the same key)."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    actions = actions_to_of(parser, flow.actions)
    instructions = (
        [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)] if actions else []
    )
    if flow.meter_id is not None:
        instructions.insert(0, parser.OFPInstructionMeter(flow.meter_id, ofp.OFPIT_METER))
    return parser.OFPFlowMod(
        datapath,
        cookie=flow.cookie,
        table_id=flow.table_id,
        command=ofp.OFPFC_ADD,
        priority=flow.priority,
        match=match_to_of(parser, flow.match),
        instructions=instructions,
    )


def flow_delete(datapath: Any, flow: FlowRule) -> Any:
    """An OFPFC_DELETE_STRICT for exactly `flow`'s key."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPFlowMod(
        datapath,
        table_id=flow.table_id,
        command=ofp.OFPFC_DELETE_STRICT,
        priority=flow.priority,
        out_port=ofp.OFPP_ANY,
        out_group=ofp.OFPG_ANY,
        match=match_to_of(parser, flow.match),
    )


def flow_from_stats(stats: Any) -> FlowRule:
    actions: list[Any] = []
    meter_id = None
    for instruction in stats.instructions:
        if type(instruction).__name__ == "OFPInstructionMeter":
            meter_id = instruction.meter_id
        actions.extend(getattr(instruction, "actions", None) or [])
    return FlowRule(
        priority=stats.priority,
        match=match_from_of(stats.match),
        actions=actions_from_of(actions),
        cookie=stats.cookie,
        table_id=stats.table_id,
        meter_id=meter_id,
    )


def flow_stats_request(datapath: Any, cookie: int, mask: int) -> Any:
    """A flow stats multipart request for every table's flows with cookie & mask == cookie."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPFlowStatsRequest(
        datapath, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY, cookie, mask, parser.OFPMatch()
    )


def flow_count_from_stats(stats: Any) -> FlowCount:
    """A flow stats reply entry's key and counters; ValueError for a match braid does not
    model."""
    match = match_from_of(stats.match)
    return FlowCount(
        stats.cookie, stats.table_id, stats.priority, match, stats.packet_count, stats.byte_count
    )


def meter_stats_request(datapath: Any) -> Any:
    """A meter stats multipart request for every meter."""
    return datapath.ofproto_parser.OFPMeterStatsRequest(datapath, 0, datapath.ofproto.OFPM_ALL)


def meter_counts_from_stats(entries: Iterable[Any]) -> dict[int, PacketsBytes]:
    """Per meter id, its bands' packet and byte counts summed (a meter stats reply)."""
    found: dict[int, PacketsBytes] = {}
    for entry in entries:
        bands = list(entry.band_stats or [])
        packets = sum(b.packet_band_count for b in bands)
        found[entry.meter_id] = (packets, sum(b.byte_band_count for b in bands))
    return found


def packet_out(datapath: Any, actions: Iterable[Action], frame: bytes) -> Any:
    """An OFPT_PACKET_OUT sending `frame` from the controller through `actions`."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPPacketOut(
        datapath,
        buffer_id=ofp.OFP_NO_BUFFER,
        in_port=ofp.OFPP_CONTROLLER,
        actions=actions_to_of(parser, actions),
        data=frame,
    )


def meter_mod(datapath: Any, meter: Meter, command: str) -> Any:
    """OFPMC_ADD (`command` "add") or OFPMC_MODIFY of `meter`: kbit/s, one drop band."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    code = ofp.OFPMC_ADD if command == "add" else ofp.OFPMC_MODIFY
    flags = ofp.OFPMF_KBPS | ofp.OFPMF_BURST | ofp.OFPMF_STATS
    band = parser.OFPMeterBandDrop(rate=meter.rate_kbps, burst_size=meter.burst_kbits)
    return parser.OFPMeterMod(datapath, code, flags, meter.meter_id, [band])


def meter_delete(datapath: Any, meter_id: int) -> Any:
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPMeterMod(datapath, ofp.OFPMC_DELETE, 0, meter_id, [])


def meter_from_config(config: Any, ofp: Any) -> Meter | None:
    """A meter config reply entry as a `Meter`; None when it is not braid's (id outside
    `BRAID_METER_IDS`); ValueError for a braid meter braid does not model."""
    if config.meter_id not in BRAID_METER_IDS:
        return None
    flags = ofp.OFPMF_KBPS | ofp.OFPMF_BURST | ofp.OFPMF_STATS
    bands = list(config.bands)
    if config.flags != flags or len(bands) != 1 or bands[0].type != ofp.OFPMBT_DROP:
        raise ValueError(f"braid does not model meter {config.meter_id} (flags, bands)")
    return Meter(config.meter_id, bands[0].rate, bands[0].burst_size)


def group_mod(datapath: Any, group: Group | None, command: str, group_id: int = 0) -> Any:
    """OFPGC_ADD / OFPGC_MODIFY of `group`, or OFPGC_DELETE of `group_id` (group None)."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    if group is None:
        return parser.OFPGroupMod(datapath, ofp.OFPGC_DELETE, 0, group_id, [])
    buckets = [
        parser.OFPBucket(
            weight=b.weight if group.kind is GroupKind.SELECT else 0,
            watch_port=ofp.OFPP_ANY if b.watch_port is None else b.watch_port,
            watch_group=ofp.OFPG_ANY,
            actions=actions_to_of(parser, b.actions),
        )
        for b in group.buckets
    ]
    code = ofp.OFPGC_ADD if command == "add" else ofp.OFPGC_MODIFY
    return parser.OFPGroupMod(datapath, code, _GROUP_TYPES[group.kind], group.group_id, buckets)


def group_from_desc(desc: Any, any_port: int) -> Group:
    kinds = {v: k for k, v in _GROUP_TYPES.items()}
    kind = kinds[desc.type]
    buckets = tuple(
        Bucket(
            actions_from_of(b.actions),
            b.weight if kind is GroupKind.SELECT else 1,
            None if b.watch_port == any_port else b.watch_port,
        )
        for b in desc.buckets
    )
    return Group(desc.group_id, kind, buckets)


def port_is_up(ofp: Any, reason: int, desc: Any) -> tuple[bool, bool]:
    """What an OFPT_PORT_STATUS says: (up: not deleted, set down or link down; live)."""
    live = bool(desc.state & ofp.OFPPS_LIVE)
    if reason == ofp.OFPPR_DELETE:
        return False, live
    return not (desc.config & ofp.OFPPC_PORT_DOWN or desc.state & ofp.OFPPS_LINK_DOWN), live
