"""From the tables the switches hold to the tables they should hold, without a dropped packet.

Entry rules (the ingress rules that steer a host's traffic into a
reservation) are added only once every switch has the forwarding they point
at, and removed before that forwarding goes: the same rule as
`core.rules.changes` for one reservation, applied to whole tables. A flow
whose key is kept but whose actions change is rewritten in place, which is
atomic on the switch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from braid.core.rules.compiler import ENTRY_PRIORITY
from braid.core.rules.model import RuleSet, Step, StepKind
from braid.core.rules.tables import difference

__all__ = ["TableChanges", "table_changes"]


@dataclass(frozen=True, slots=True)
class TableChanges:
    """The steps in order, and which switches they touch."""

    steps: tuple[Step, ...]

    @property
    def switches(self) -> frozenset[str]:
        return frozenset(s.rule_set.switch for s in self.steps)

    @property
    def empty(self) -> bool:
        return not self.steps


def table_changes(
    actual: Mapping[str, RuleSet], desired: Mapping[str, RuleSet], dpids: Mapping[str, int]
) -> TableChanges:
    """Steps that turn `actual` into `desired` on every switch named in either.

    Order: forwarding and groups added, entry added, entry removed, forwarding
    and groups removed. Switches are taken in name order, so equal inputs give
    equal steps.
    """
    adds: list[tuple[RuleSet, RuleSet]] = []
    deletes: list[tuple[RuleSet, RuleSet]] = []
    for switch in sorted(set(actual) | set(desired)):
        dpid = dpids.get(switch, 0)
        have = actual.get(switch) or RuleSet(switch, dpid)
        want = desired.get(switch) or RuleSet(switch, dpid)
        add, delete = difference(have, want)
        adds.append(_split(add))
        deletes.append(_split(delete))
    steps = [
        *(Step(StepKind.APPLY, forwarding) for forwarding, _ in adds if not forwarding.empty),
        *(Step(StepKind.APPLY, entry) for _, entry in adds if not entry.empty),
        *(Step(StepKind.REMOVE, entry) for _, entry in deletes if not entry.empty),
        *(Step(StepKind.REMOVE, forwarding) for forwarding, _ in deletes if not forwarding.empty),
    ]
    return TableChanges(tuple(steps))


def _split(rule_set: RuleSet) -> tuple[RuleSet, RuleSet]:
    """(forwarding flows, groups, meters and queues; entry flows) of one switch's rule set."""
    entry = tuple(f for f in rule_set.flows if f.priority >= ENTRY_PRIORITY)
    forwarding = tuple(f for f in rule_set.flows if f.priority < ENTRY_PRIORITY)
    return (
        dataclasses.replace(rule_set, flows=forwarding),
        RuleSet(rule_set.switch, rule_set.dpid, entry, ()),
    )
