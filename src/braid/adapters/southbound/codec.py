"""Rule sets as JSON, for the local API between braid and `braid controller`.

The encoding is plain and explicit (one object per action with a `type`), so
other tools can speak it too; decoding checks every field and names the one
that is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any, Final

from braid.adapters.southbound.switch_stats import FlowCount
from braid.core.delivery.samples import PacketsBytes
from braid.core.errors import InputError
from braid.core.rules.enforcement import Meter
from braid.core.rules.model import (
    Action,
    Bucket,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    Match,
    Output,
    PopVlan,
    PushVlan,
    Queue,
    RuleSet,
    Selection,
    SetQueue,
    SetVlan,
)

__all__ = [
    "MAX_FRAMES",
    "MAX_FRAME_BYTES",
    "flow_counts_from_json",
    "flow_counts_to_json",
    "meter_counts_from_json",
    "meter_counts_to_json",
    "packet_out_from_json",
    "packet_out_to_json",
    "rule_set_from_json",
    "rule_set_to_json",
]

MAX_FRAMES: Final = 1000  # per packet-out request
MAX_FRAME_BYTES: Final = 9216  # a jumbo frame
MIN_FRAME_BYTES: Final = 14  # an Ethernet header

_MATCH_FIELDS = {f.name for f in fields(Match)}


def _action_to_json(action: Action) -> dict[str, Any]:
    if isinstance(action, Output):
        return {"type": "output", "port": action.port}
    if isinstance(action, PushVlan):
        return {"type": "push_vlan", "vid": action.vid}
    if isinstance(action, SetVlan):
        return {"type": "set_vlan", "vid": action.vid}
    if isinstance(action, PopVlan):
        return {"type": "pop_vlan"}
    if isinstance(action, SetQueue):
        return {"type": "set_queue", "queue_id": action.queue_id}
    return {"type": "group", "group_id": action.group_id}


def _match_to_json(match: Match) -> dict[str, Any]:
    return {k: v for k, v in asdict(match).items() if v is not None}


def _flow_to_json(f: FlowRule) -> dict[str, Any]:
    data: dict[str, Any] = {
        "table_id": f.table_id,
        "priority": f.priority,
        "cookie": f.cookie,
        "match": _match_to_json(f.match),
        "actions": [_action_to_json(a) for a in f.actions],
    }
    if f.meter_id is not None:
        data["meter_id"] = f.meter_id
    return data


def rule_set_to_json(rule_set: RuleSet) -> dict[str, Any]:
    return {
        "switch": rule_set.switch,
        "dpid": rule_set.dpid,
        "flows": [_flow_to_json(f) for f in rule_set.flows],
        "groups": [
            {
                "group_id": g.group_id,
                "kind": g.kind.value,
                "selection": g.selection.value,
                "buckets": [
                    {
                        "weight": b.weight,
                        "watch_port": b.watch_port,
                        "actions": [_action_to_json(a) for a in b.actions],
                    }
                    for b in g.buckets
                ],
            }
            for g in rule_set.groups
        ],
        "meters": [asdict(m) for m in rule_set.meters],
        "queues": [asdict(q) for q in rule_set.queues],
    }


def _int(data: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}.{key}", f"must be an integer, got {value!r}")
    return value


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise InputError(f"{where}.{key}", "must be a list")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(where, "must be an object")
    return value


def _action_from_json(data: object, where: str) -> Action:
    item = _mapping(data, where)
    kind = item.get("type")
    if kind == "output":
        return Output(_int(item, "port", where))
    if kind == "push_vlan":
        return PushVlan(_int(item, "vid", where))
    if kind == "set_vlan":
        return SetVlan(_int(item, "vid", where))
    if kind == "pop_vlan":
        return PopVlan()
    if kind == "group":
        return GroupAction(_int(item, "group_id", where))
    if kind == "set_queue":
        return SetQueue(_int(item, "queue_id", where))
    raise InputError(f"{where}.type", f"unknown action type {kind!r}")


def _actions(data: Mapping[str, Any], where: str) -> tuple[Action, ...]:
    items = _list(data, "actions", where)
    return tuple(_action_from_json(a, f"{where}.actions[{i}]") for i, a in enumerate(items))


def _match_from_json(item: Mapping[str, Any], where: str) -> Match:
    match = dict(_mapping(item.get("match", {}), f"{where}.match"))
    unknown = set(match) - _MATCH_FIELDS
    if unknown:
        raise InputError(f"{where}.match.{sorted(unknown)[0]}", "unknown match field")
    return Match(**match)


def _flow_from_json(data: object, where: str) -> FlowRule:
    item = _mapping(data, where)
    return FlowRule(
        priority=_int(item, "priority", where),
        match=_match_from_json(item, where),
        actions=_actions(item, where),
        cookie=_int(item, "cookie", where, 0),
        table_id=_int(item, "table_id", where, 0),
        meter_id=None if item.get("meter_id") is None else _int(item, "meter_id", where),
    )


def _meter_from_json(data: object, where: str) -> Meter:
    item = _mapping(data, where)
    return Meter(
        _int(item, "meter_id", where),
        _int(item, "rate_kbps", where),
        _int(item, "burst_kbits", where),
    )


def _queue_from_json(data: object, where: str) -> Queue:
    item = _mapping(data, where)
    names = ("port", "queue_id", "min_rate", "max_rate", "line_rate")
    return Queue(*(_int(item, name, where) for name in names))


def _group_from_json(data: object, where: str) -> Group:
    item = _mapping(data, where)
    try:
        kind = GroupKind(str(item.get("kind")))
        selection = Selection(str(item.get("selection", "flow")))
    except ValueError as exc:
        raise InputError(f"{where}.kind", f"unknown group kind or selection: {exc}") from exc
    buckets = []
    for i, raw in enumerate(_list(item, "buckets", where)):
        bucket = _mapping(raw, f"{where}.buckets[{i}]")
        watch = bucket.get("watch_port")
        buckets.append(
            Bucket(
                _actions(bucket, f"{where}.buckets[{i}]"),
                _int(bucket, "weight", f"{where}.buckets[{i}]", 1),
                None if watch is None else _int(bucket, "watch_port", f"{where}.buckets[{i}]"),
            )
        )
    return Group(_int(item, "group_id", where), kind, tuple(buckets), selection)


def rule_set_from_json(data: object, where: str = "rule_set") -> RuleSet:
    item = _mapping(data, where)
    switch = item.get("switch")
    if not isinstance(switch, str) or not switch:
        raise InputError(f"{where}.switch", "must be a non-empty string")
    flows = [
        _flow_from_json(f, f"{where}.flows[{i}]") for i, f in enumerate(_list(item, "flows", where))
    ]
    groups = [
        _group_from_json(g, f"{where}.groups[{i}]")
        for i, g in enumerate(_list(item, "groups", where))
    ]
    meters = [
        _meter_from_json(m, f"{where}.meters[{i}]")
        for i, m in enumerate(_list(item, "meters", where))
    ]
    queues = [
        _queue_from_json(q, f"{where}.queues[{i}]")
        for i, q in enumerate(_list(item, "queues", where))
    ]
    return RuleSet.of(switch, _int(item, "dpid", where), flows, groups, meters, queues)


# --- counters and packet-outs (the circuit check, delivery) ---


def flow_counts_to_json(flows: Sequence[FlowCount]) -> dict[str, Any]:
    return {
        "flows": [
            {
                "cookie": f.cookie,
                "table_id": f.table_id,
                "priority": f.priority,
                "match": _match_to_json(f.match),
                "packets": f.packets,
                "bytes": f.bytes,
            }
            for f in flows
        ]
    }


def flow_counts_from_json(data: object, where: str = "body") -> list[FlowCount]:
    found = []
    for i, raw in enumerate(_list(_mapping(data, where), "flows", where)):
        at = f"{where}.flows[{i}]"
        item = _mapping(raw, at)
        cookie, table_id, priority, packets, size = (
            _int(item, name, at) for name in ("cookie", "table_id", "priority", "packets", "bytes")
        )
        match = _match_from_json(item, at)
        found.append(FlowCount(cookie, table_id, priority, match, packets, size))
    return found


def meter_counts_to_json(meters: Mapping[int, PacketsBytes]) -> dict[str, Any]:
    listed = [{"meter_id": m, "packets": p, "bytes": b} for m, (p, b) in sorted(meters.items())]
    return {"meters": listed}


def meter_counts_from_json(data: object, where: str = "body") -> dict[int, PacketsBytes]:
    found: dict[int, PacketsBytes] = {}
    for i, raw in enumerate(_list(_mapping(data, where), "meters", where)):
        at = f"{where}.meters[{i}]"
        item = _mapping(raw, at)
        found[_int(item, "meter_id", at)] = (_int(item, "packets", at), _int(item, "bytes", at))
    return found


def packet_out_to_json(actions: Sequence[Action], frames: Sequence[bytes]) -> dict[str, Any]:
    return {"actions": [_action_to_json(a) for a in actions], "frames": [f.hex() for f in frames]}


def packet_out_from_json(
    data: object, where: str = "packet_out"
) -> tuple[tuple[Action, ...], list[bytes]]:
    """The actions and frames of a packet-out request; each frame is hex, 14 to 9216 bytes."""
    item = _mapping(data, where)
    raw = _list(item, "frames", where)
    if not 1 <= len(raw) <= MAX_FRAMES:
        raise InputError(f"{where}.frames", f"must hold 1 to {MAX_FRAMES} frames, got {len(raw)}")
    return _actions(item, where), [_frame(f, f"{where}.frames[{i}]") for i, f in enumerate(raw)]


def _frame(value: object, where: str) -> bytes:
    try:
        frame = bytes.fromhex(value) if isinstance(value, str) else None
    except ValueError:
        frame = None
    if frame is None:
        raise InputError(where, "must be the frame's bytes in hex")
    if not MIN_FRAME_BYTES <= len(frame) <= MAX_FRAME_BYTES:
        raise InputError(
            where, f"must be {MIN_FRAME_BYTES} to {MAX_FRAME_BYTES} bytes, got {len(frame)}"
        )
    return frame
