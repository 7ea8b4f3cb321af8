"""How a reservation's traffic is spread over its paths, as the store keeps it.

Written at booking, and again whenever a modification re-plans the paths, so
the weights, MDI and stream count always describe the paths stored with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from braid.app.records import Reservation
from braid.core.failover.protection import ProtectedPaths
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.model.units import to_mbps
from braid.core.planning.decisions import Reserved
from braid.core.planning.requests import Request
from braid.core.rules.calendar import Assigned
from braid.core.rules.enforcement import Policing, parse_policing

OWNER_FACTS: Final = ("policing",)
"""Plan keys the owner chose at booking, not the planner: a re-plan keeps them."""

__all__ = [
    "Replanned",
    "booked_allocations",
    "fixed_request",
    "kept_facts",
    "labels_of",
    "link_lists",
    "plan_facts",
    "policing_of",
    "protection_facts",
    "protection_of",
]


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


def labels_of(plan: Mapping[str, Any]) -> Assigned | None:
    """The VLANs and group ids stored with a reservation; None for one booked without them."""
    vlans, groups = plan.get("vlans"), plan.get("group_ids")
    if not isinstance(vlans, list) or not isinstance(groups, list):
        return None
    return Assigned(tuple(int(v) for v in vlans), tuple(int(g) for g in groups))


def link_lists(allocations: tuple[Allocation, ...]) -> list[tuple[str, ...]]:
    """Each path's links, in path order: what a path's VLAN is checked against."""
    return [a.path.links for a in allocations]


def kept_facts(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """A re-planned reservation's plan: the new split, with what the owner chose kept."""
    kept = {k: old[k] for k in OWNER_FACTS if k in old}
    return {**new, **kept}


def policing_of(plan: Mapping[str, Any]) -> Policing:
    """How the reservation is policed; soft for one booked before braid asked."""
    return parse_policing(plan.get("policing", Policing.SOFT.value), "plan.policing")


def protection_of(plan: Mapping[str, Any]) -> ProtectedPaths | None:
    """A protected reservation's two paths and which carries its traffic; None if unprotected."""
    found = plan.get("protection")
    if not isinstance(found, Mapping):
        return None
    return ProtectedPaths(
        _path(found["primary"]), _path(found["standby"]), found.get("on") == "standby"
    )


def protection_facts(paths: ProtectedPaths, shared: tuple[str, ...]) -> dict[str, Any]:
    """The plan entry that stores `paths` (see `protection_of`)."""
    return {
        "primary": paths.primary.as_dict(),
        "standby": paths.standby.as_dict(),
        "on": "standby" if paths.on_standby else "primary",
        "shared_links": list(shared),
    }


def booked_allocations(
    allocations: tuple[Allocation, ...], plan: Mapping[str, Any]
) -> tuple[Allocation, ...]:
    """Every path a reservation books: for a protected one its primary then its standby,
    each at the full bandwidth (the standby's capacity is its own, never shared)."""
    paths = protection_of(plan)
    if paths is None:
        return allocations
    bandwidth = sum(a.bandwidth for a in allocations)
    return (Allocation(paths.primary, bandwidth), Allocation(paths.standby, bandwidth))


def _path(data: Mapping[str, Any]) -> Path:
    return Path(tuple(str(n) for n in data["nodes"]), tuple(str(k) for k in data["links"]))


def fixed_request(
    stored: Reservation, start: int, end: int | None = None, bandwidth: int | None = None
) -> Request:
    """A stored reservation asked again as a fixed-slot request from `start`.

    Re-routes and modifications plan it this way: same ends, same split
    rule and direction, the end and bandwidth it has unless told others.
    """
    return Request(
        id=stored.id,
        mode="fixed",
        src=stored.src,
        dst=stored.dst,
        bandwidth=stored.bandwidth if bandwidth is None else bandwidth,
        start=start,
        end=stored.end if end is None else end,
        max_paths=int(stored.request.get("max_paths", 1)),
        split=stored.request.get("split", "flow"),
        directional=not stored.symmetric,
    )
