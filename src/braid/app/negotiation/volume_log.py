"""How a volume reservation's steps are kept in the decision log, for those who read it back.

A committed volume's result (`volume.volume_body`) lists its steps' sub-transactions
and, since step rules are logged, each step's rule plan beside it (`step_switches`,
in the same order). Recovery reads the plan back to send each step's Commit with
the rules the live path would have sent. Entries written before step rules were
logged have no `step_switches`: their steps commit with no rules, as they did then.
Kept apart from `volume` so that `delivery` reads it without importing the negotiation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from braid.app.negotiation.results import plans_from_dict, plans_to_dict
from braid.core.negotiation.result_rules import SwitchPlan

__all__ = ["VOLUME_KIND", "is_volume_body", "step_plan", "step_plans_body"]

# Marks a volume reservation's result in the decision log (beside window ones).
VOLUME_KIND: Final = "volume"


def is_volume_body(body: Mapping[str, Any] | None) -> bool:
    return body is not None and body.get("kind") == VOLUME_KIND


def step_plans_body(plans: Sequence[Sequence[SwitchPlan]]) -> list[list[dict[str, Any]]]:
    """Every step's rule plan, in step order, as the log keeps it."""
    return [plans_to_dict(plan) for plan in plans]


def step_plan(body: Mapping[str, Any], step_transaction: str) -> tuple[SwitchPlan, ...]:
    """The rule plan logged for one step's sub-transaction; none when the entry has no
    step rules (written before they were logged) or does not know the step."""
    steps: Sequence[str] = body.get("step_transactions", ())
    plans: Sequence[Any] = body.get("step_switches", ())
    if step_transaction not in steps:
        return ()
    index = list(steps).index(step_transaction)
    return plans_from_dict(plans[index]) if index < len(plans) else ()
