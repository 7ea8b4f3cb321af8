"""How a reservation's traffic is spread over its paths, as the store keeps it.

Written at booking, and again whenever a modification re-plans the paths, so
the weights, MDI and stream count always describe the paths stored with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from braid.core.model.booking import Allocation
from braid.core.model.units import to_mbps
from braid.core.planning.decisions import Reserved

__all__ = ["Replanned", "plan_facts"]


def plan_facts(decision: Reserved) -> dict[str, Any]:
    """The split of a planner decision (bandwidth in Mbit/s, as the REST API shows it)."""
    plan = decision.plan
    facts: dict[str, Any] = {
        "split": plan.mode,
        "weights": list(plan.weights),
        "mdi": round(plan.mdi, 6),
        "resequence": plan.resequence,
        "recommended_streams": plan.recommended_streams,
    }
    if decision.max_flow is not None:
        facts["max_flow"] = to_mbps(decision.max_flow)
    return facts


@dataclass(frozen=True, slots=True)
class Replanned:
    """A modification's new paths and the split that goes with them."""

    allocations: tuple[Allocation, ...]
    plan: Mapping[str, Any]
