"""Ordered driver steps to install, remove and modify reservations without a gap.

Installing: forwarding (groups, core and egress rules) first, entry rules
last, so no packet is steered onto a path that is not there yet. Removing:
entry first, forwarding last, so nothing is steered onto a half-removed path.
Modifying (make-before-break): install the new plan completely; its entry
rules replace the old ones in place when their keys match (an OpenFlow add
with the same table, priority and match overwrites atomically); then remove
what only the old plan had, entry first. At every step each packet of the
reservation has a complete route, old or new.
"""

from __future__ import annotations

from collections.abc import Iterable

from braid.core.errors import InputError
from braid.core.rules.model import RulePlan, RuleSet, Step, StepKind, merge_rule_sets

__all__ = ["install_steps", "make_before_break", "removal_steps"]


def _steps(kind: StepKind, rule_sets: Iterable[RuleSet]) -> list[Step]:
    return [Step(kind, r) for r in rule_sets if not r.empty]


def install_steps(plan: RulePlan) -> tuple[Step, ...]:
    return (*_steps(StepKind.APPLY, plan.forwarding), *_steps(StepKind.APPLY, plan.entry))


def removal_steps(plan: RulePlan) -> tuple[Step, ...]:
    """Exactly the plan's rules, entry first: applying them leaves nothing of the plan behind."""
    return (*_steps(StepKind.REMOVE, plan.entry), *_steps(StepKind.REMOVE, plan.forwarding))


def _minus(old: Iterable[RuleSet], new: RulePlan) -> list[RuleSet]:
    """`old` without anything the new plan also holds (same flow key or group id)."""
    keep = merge_rule_sets(new.rule_sets())
    result = []
    for rule_set in merge_rule_sets(old).values():
        other = keep.get(rule_set.switch)
        result.append(rule_set if other is None else rule_set.without(other))
    return result


def make_before_break(old: RulePlan, new: RulePlan) -> tuple[Step, ...]:
    """Steps that move a reservation from `old` to `new` without a moment unrouted.

    `new` must have been compiled with `old`'s labels marked in use (see
    `LabelPool.with_plans`), so its paths never reuse a VLAN or group the
    old plan's traffic still depends on.
    """
    shared_labels = set(old.labels) & set(new.labels)
    shared_groups = set(old.group_ids) & set(new.group_ids)
    if shared_labels or shared_groups:
        raise InputError(
            "new", f"reuses old labels {sorted(shared_labels)} / groups {sorted(shared_groups)}"
        )
    return (
        *install_steps(new),
        *_steps(StepKind.REMOVE, _minus(old.entry, new)),
        *_steps(StepKind.REMOVE, _minus(old.forwarding, new)),
    )
