"""Rule sets as JSON, for the local API between braid and `braid controller`.

The encoding is plain and explicit (one object per action with a `type`), so
other tools can speak it too; decoding checks every field and names the one
that is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any

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

__all__ = ["rule_set_from_json", "rule_set_to_json"]

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


def _flow_to_json(f: FlowRule) -> dict[str, Any]:
    data: dict[str, Any] = {
        "table_id": f.table_id,
        "priority": f.priority,
        "cookie": f.cookie,
        "match": {k: v for k, v in asdict(f.match).items() if v is not None},
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


def _flow_from_json(data: object, where: str) -> FlowRule:
    item = _mapping(data, where)
    match = dict(_mapping(item.get("match", {}), f"{where}.match"))
    unknown = set(match) - _MATCH_FIELDS
    if unknown:
        raise InputError(f"{where}.match.{sorted(unknown)[0]}", "unknown match field")
    return FlowRule(
        priority=_int(item, "priority", where),
        match=Match(**match),
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
