"""Whole switch tables: the difference that turns what a switch holds into what it should."""

from __future__ import annotations

from braid.core.rules.model import FlowRule, Group, Meter, Queue, RuleSet

__all__ = ["difference"]


def difference(actual: RuleSet, desired: RuleSet) -> tuple[RuleSet, RuleSet]:
    """(to add or rewrite, to delete) that turn `actual` into `desired`.

    A flow whose key is desired but whose actions or cookie differ is in the
    first set only: adding it overwrites the entry in place. Flows or groups
    the switch holds twice (a broken switch or a restarted one replaying)
    cannot survive either: the switch keeps one entry per key.
    """
    have_flows: dict[tuple[int, int, object], FlowRule] = {f.key: f for f in actual.flows}
    have_groups: dict[int, Group] = {g.group_id: g for g in actual.groups}
    have_meters: dict[int, Meter] = {m.meter_id: m for m in actual.meters}
    have_queues: dict[tuple[int, int], Queue] = {q.key: q for q in actual.queues}
    want_keys = {f.key for f in desired.flows}
    want_ids = {g.group_id for g in desired.groups}
    want_meters = {m.meter_id for m in desired.meters}
    want_queues = {q.key for q in desired.queues}
    add = RuleSet(
        desired.switch,
        desired.dpid,
        tuple(f for f in desired.flows if have_flows.get(f.key) != f),
        tuple(g for g in desired.groups if have_groups.get(g.group_id) != g),
        tuple(m for m in desired.meters if have_meters.get(m.meter_id) != m),
        tuple(q for q in desired.queues if have_queues.get(q.key) != q),
    )
    delete = RuleSet(
        actual.switch,
        actual.dpid,
        tuple(f for f in actual.flows if f.key not in want_keys),
        tuple(g for g in actual.groups if g.group_id not in want_ids),
        tuple(m for m in actual.meters if m.meter_id not in want_meters),
        tuple(q for q in actual.queues if q.key not in want_queues),
    )
    return add, delete
