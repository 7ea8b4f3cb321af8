"""braid's rule model to and from the text syntax of `ovs-ofctl` (OpenFlow 1.3).

`flow_text`/`group_text` write flows and groups the way `ovs-ofctl add-flow`
and `add-group` read them; `parse_flow`/`parse_group` read the lines of
`ovs-ofctl --no-names --no-stats dump-flows` and `dump-groups` back into model
objects, so `dump()` can be compared with what was applied. Anything braid
does not model is an error rather than silently dropped, so a dump never
looks equal to a rule set it is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

from braid.adapters.southbound.driver import SouthboundError
from braid.core.errors import InputError
from braid.core.rules.enforcement import BRAID_METER_IDS
from braid.core.rules.model import (
    ETH_TYPE_ARP,
    ETH_TYPE_IPV4,
    IN_PORT,
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
    Selection,
    SetQueue,
    SetVlan,
)

__all__ = [
    "flow_key_text",
    "flow_text",
    "group_text",
    "meter_text",
    "parse_flow",
    "parse_group",
    "parse_meters",
]

VLAN_PRESENT: Final = 0x1000
_PROTOCOL_WORDS: Final = {
    "ip": (ETH_TYPE_IPV4, None),
    "arp": (ETH_TYPE_ARP, None),
    "tcp": (ETH_TYPE_IPV4, 6),
    "udp": (ETH_TYPE_IPV4, 17),
    "icmp": (ETH_TYPE_IPV4, 1),
}
# ovs-ofctl name -> (Match field, value reader)
_MATCH_FIELDS: Final[dict[str, tuple[str, Callable[[str], Any]]]] = {
    "in_port": ("in_port", int),
    "dl_type": ("eth_type", lambda v: int(v, 0)),
    "dl_src": ("eth_src", str),
    "dl_dst": ("eth_dst", str),
    "dl_vlan": ("vlan_vid", int),
    "nw_proto": ("ip_proto", int),
    "nw_src": ("ipv4_src", str),
    "nw_dst": ("ipv4_dst", str),
    "tp_src": ("tp_src", int),
    "tp_dst": ("tp_dst", int),
    "arp_spa": ("arp_spa", str),
    "arp_tpa": ("arp_tpa", str),
}
_UNTAGGED_TEXT: Final = "vlan_tci=0x0000/0x1fff"


# --- writing ------------------------------------------------------------------


def match_text(match: Match) -> str:
    parts: list[str] = []
    if match.in_port is not None:
        parts.append(f"in_port={match.in_port}")
    if match.eth_type is not None:
        parts.append(f"dl_type=0x{match.eth_type:04x}")
    if match.vlan_vid == UNTAGGED:
        parts.append(_UNTAGGED_TEXT)
    elif match.vlan_vid is not None:
        parts.append(f"dl_vlan={match.vlan_vid}")
    for name, (attr, _) in _MATCH_FIELDS.items():
        if name in ("in_port", "dl_type", "dl_vlan"):
            continue
        value = getattr(match, attr)
        if value is not None:
            parts.append(f"{name}={value}")
    return ",".join(parts)


def actions_text(actions: tuple[Action, ...]) -> str:
    if not actions:
        return "drop"
    words: list[str] = []
    for action in actions:
        if isinstance(action, Output):
            words.append("IN_PORT" if action.port == IN_PORT else f"output:{action.port}")
        elif isinstance(action, PushVlan):
            words.append(f"push_vlan:0x8100,set_field:{action.vid | VLAN_PRESENT}->vlan_vid")
        elif isinstance(action, SetVlan):
            words.append(f"set_field:{action.vid | VLAN_PRESENT}->vlan_vid")
        elif isinstance(action, PopVlan):
            words.append("pop_vlan")
        elif isinstance(action, SetQueue):
            words.append(f"set_queue:{action.queue_id}")
        else:
            words.append(f"group:{action.group_id}")
    return ",".join(words)


def flow_key_text(flow: FlowRule) -> str:
    """What `del-flows --strict` needs to find exactly this entry."""
    match = match_text(flow.match)
    return f"table={flow.table_id},priority={flow.priority}" + (f",{match}" if match else "")


def flow_text(flow: FlowRule) -> str:
    meter = "" if flow.meter_id is None else f"meter:{flow.meter_id},"
    actions = actions_text(flow.actions)
    return f"cookie={flow.cookie:#x},{flow_key_text(flow)},actions={meter}{actions}"


def group_text(group: Group) -> str:
    if group.kind is GroupKind.SELECT and group.selection is Selection.PACKET:
        raise InputError(
            f"group {group.group_id}.selection",
            "per-packet splitting needs braid's edge element; Open vSwitch splits per flow",
        )
    buckets = []
    for bucket in group.buckets:
        fields = []
        if group.kind is GroupKind.SELECT:
            fields.append(f"weight:{bucket.weight}")
        if bucket.watch_port is not None:
            fields.append(f"watch_port:{bucket.watch_port}")
        fields.append(f"actions={actions_text(bucket.actions)}")
        buckets.append("bucket=" + ",".join(fields))
    return f"group_id={group.group_id},type={group.kind.value}," + ",".join(buckets)


def meter_text(meter: Meter) -> str:
    """A meter as `ovs-ofctl add-meter`/`mod-meter` read it: one drop band, kbit/s, burst."""
    return (
        f"meter={meter.meter_id},kbps,burst,stats,"
        f"bands=type=drop,rate={meter.rate_kbps},burst_size={meter.burst_kbits}"
    )


# --- reading ------------------------------------------------------------------


def _fail(line: str, why: str) -> SouthboundError:
    return SouthboundError("", f"cannot read {line.strip()!r}: {why}")


def parse_match(text: str, line: str) -> Match:
    fields: dict[str, Any] = {}
    for word in filter(None, (w.strip() for w in text.split(","))):
        name, _, value = word.partition("=")
        if word in _PROTOCOL_WORDS:
            fields["eth_type"], proto = _PROTOCOL_WORDS[word]
            if proto is not None:
                fields["ip_proto"] = proto
        elif word == _UNTAGGED_TEXT:
            fields["vlan_vid"] = UNTAGGED
        elif name in _MATCH_FIELDS and value:
            attr, read = _MATCH_FIELDS[name]
            try:
                fields[attr] = read(value)
            except ValueError as exc:
                raise _fail(line, f"bad {name}") from exc
        else:
            raise _fail(line, f"braid does not model match field {word!r}")
    try:
        return Match(**fields)
    except InputError as exc:
        raise _fail(line, str(exc)) from exc


def _action_words(text: str) -> Iterator[str]:
    yield from (w.strip() for w in text.split(",") if w.strip())


def parse_actions(text: str, line: str) -> tuple[Action, ...]:
    actions: list[Action] = []
    pending_push = False
    for word in _action_words(text):
        if word == "drop":
            continue
        if word == "push_vlan:0x8100":
            pending_push = True
            continue
        if word.startswith("set_field:") and word.endswith("->vlan_vid"):
            vid = int(word[len("set_field:") : -len("->vlan_vid")], 0) & ~VLAN_PRESENT
            actions.append(PushVlan(vid) if pending_push else SetVlan(vid))
            pending_push = False
            continue
        if pending_push:
            raise _fail(line, "push_vlan without a VLAN id")
        actions.append(_simple_action(word, line))
    if pending_push:
        raise _fail(line, "push_vlan without a VLAN id")
    return tuple(actions)


def _simple_action(word: str, line: str) -> Action:
    if word == "pop_vlan":
        return PopVlan()
    if word == "IN_PORT":
        return Output(IN_PORT)
    kind, _, arg = word.partition(":")
    if kind in ("output", "group", "set_queue") and arg.isdigit():
        if kind == "set_queue":
            return SetQueue(int(arg))
        return Output(int(arg)) if kind == "output" else GroupAction(int(arg))
    if word.isdigit():
        return Output(int(word))
    raise _fail(line, f"braid does not model action {word!r}")


def parse_flow(line: str) -> FlowRule:
    """One line of `dump-flows --no-stats --no-names` as a `FlowRule`."""
    head, sep, actions = line.strip().partition(" actions=")
    if not sep:
        raise _fail(line, "no actions")
    meter_id = None
    if actions.startswith("meter:"):
        # OpenFlow 1.3 runs the meter instruction before the actions: it leads the list.
        word, _, actions = actions.partition(",")
        if not word[len("meter:") :].isdigit():
            raise _fail(line, f"bad meter {word!r}")
        meter_id = int(word[len("meter:") :])
    header: dict[str, str] = {}
    match_words = []
    for word in (w.strip() for w in head.replace(", ", ",").split(",")):
        name, _, value = word.partition("=")
        if name in ("cookie", "table", "priority"):
            header[name] = value
        elif name in ("duration", "n_packets", "n_bytes", "idle_age", "hard_age"):
            continue
        elif word:
            match_words.append(word)
    return FlowRule(
        priority=int(header.get("priority", "32768")),
        match=parse_match(",".join(match_words), line),
        actions=parse_actions(actions, line),
        cookie=int(header.get("cookie", "0"), 16),
        table_id=int(header.get("table", "0")),
        meter_id=meter_id,
    )


def parse_group(line: str) -> Group:
    """One line of `dump-groups` as a `Group`."""
    head, *bucket_texts = line.strip().split(",bucket=")
    fields = dict(w.partition("=")[::2] for w in head.split(","))
    try:
        group_id = int(fields["group_id"])
        kind = GroupKind(fields["type"])
    except (KeyError, ValueError) as exc:
        raise _fail(line, "no group_id or unknown type") from exc
    unknown = set(fields) - {"group_id", "type"}
    if unknown:
        raise _fail(line, f"braid does not model group field {sorted(unknown)[0]!r}")
    buckets = tuple(_parse_bucket(text, line) for text in bucket_texts)
    try:
        return Group(group_id, kind, buckets)
    except InputError as exc:
        raise _fail(line, str(exc)) from exc


def _parse_bucket(text: str, line: str) -> Bucket:
    params, sep, actions = text.partition("actions=")
    if not sep:
        raise _fail(line, "a bucket without actions")
    weight, watch_port = 1, None
    for word in filter(None, params.split(",")):
        name, _, value = word.partition(":")
        if name == "weight":
            weight = int(value)
        elif name == "watch_port":
            watch_port = int(value)
        elif name != "bucket_id":
            raise _fail(line, f"braid does not model bucket field {name!r}")
    return Bucket(parse_actions(actions, line), weight, watch_port)


_METER_HEAD: Final = re.compile(r"^meter=(\d+)\s+(.*?)\s*bands=$")
_DROP_BAND: Final = re.compile(r"^type=drop\s+rate=(\d+)\s+burst_size=(\d+)$")


def parse_meters(dump: str) -> list[Meter]:
    """braid's meters in a `dump-meters` reply (each a header line, then a line per band).

    Meters with ids outside `BRAID_METER_IDS` are not braid's and are left
    out. braid's are kbit/s with a burst and exactly one drop band; any other
    meter in braid's range is an error, as for flows, so a dump never looks
    equal to what it is not.
    """
    meters: list[Meter] = []
    lines = [ln.strip() for ln in dump.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("OFPST_", "OFPT_"))]
    for i, line in enumerate(lines):
        if not line.startswith("meter="):
            continue
        head = _METER_HEAD.match(line)
        if head is not None and int(head.group(1)) not in BRAID_METER_IDS:
            continue
        if head is None or set(head.group(2).split()) != {"kbps", "burst", "stats"}:
            raise _fail(line, "braid models kbps meters with burst and stats only")
        bands = []
        for band_line in lines[i + 1 :]:
            if band_line.startswith("meter="):
                break
            bands.append(band_line)
        band = _DROP_BAND.match(bands[0]) if len(bands) == 1 else None
        if band is None:
            raise _fail(line, f"braid models meters with one drop band, got {bands}")
        try:
            meters.append(Meter(int(head.group(1)), int(band.group(1)), int(band.group(2))))
        except InputError as exc:
            raise _fail(line, str(exc)) from exc
    return meters
