"""A volume reservation as the store keeps it: one record, its profile in `plan`.

The record's `start` is the profile's start and its `end` the completion;
`allocations` is empty (the paths change from step to step, so no single set
of paths is the reservation's); `plan["profile"]` lists the steps with their
paths in bit/s, and the store's `link_loads` hold one set of rows per step,
each over the step's own window, so the store's capacity check sees exactly
what each step books. `profile_of` reads the steps back for the mirror, for
cancellation and for provisioning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from braid.app.records import Reservation
from braid.core.errors import InputError
from braid.core.model.booking import Allocation, Booking
from braid.core.model.instants import format_instant
from braid.core.model.loads import LinkLoad, loads_of
from braid.core.model.paths import Path
from braid.core.model.topology import Topology
from braid.core.planning.decisions import Refused
from braid.core.planning.refusals import VolumeShort
from braid.core.volume import Profile, Step

__all__ = [
    "VOLUME_KIND",
    "is_volume",
    "profile_of",
    "profile_plan",
    "shortfall_offers",
    "step_bookings",
    "step_loads",
    "volume_note",
    "volume_offers",
]

VOLUME_KIND: Final = "volume"


def is_volume(reservation: Reservation) -> bool:
    return reservation.kind == VOLUME_KIND


def profile_plan(profile: Profile, volume: int) -> dict[str, Any]:
    """The `plan` of a volume record: the bytes asked and the steps, rates in bit/s."""
    return {
        "volume": volume,
        "completion": profile.end,
        "profile": [
            {
                "start": step.start,
                "end": step.end,
                "paths": [
                    {
                        "nodes": list(a.path.nodes),
                        "links": list(a.path.links),
                        "bandwidth": a.bandwidth,
                    }
                    for a in step.allocations
                ],
            }
            for step in profile.steps
        ],
    }


def profile_of(reservation: Reservation) -> Profile | None:
    """The steps of a volume record (None for any other kind), exactly as booked."""
    if not is_volume(reservation):
        return None
    steps = reservation.plan.get("profile")
    if not isinstance(steps, list) or not steps:
        raise InputError("plan", f"volume reservation {reservation.id!r} has no profile")
    return Profile(tuple(_step(step) for step in steps))


def _step(data: Mapping[str, Any]) -> Step:
    return Step(
        int(data["start"]),
        int(data["end"]),
        tuple(
            Allocation(Path(tuple(p["nodes"]), tuple(p["links"])), int(p["bandwidth"]))
            for p in data["paths"]
        ),
    )


def step_bookings(reservation: Reservation) -> tuple[Booking, ...]:
    """One window booking per step, named `id~i` as the planner books them."""
    profile = profile_of(reservation)
    if profile is None:
        raise ValueError(f"reservation {reservation.id!r} is not a volume")
    return profile.bookings(reservation.id, symmetric=reservation.symmetric)


def step_loads(reservation: Reservation, topology: Topology) -> tuple[LinkLoad, ...]:
    """Every step's loads on every link direction, each over the step's window."""
    return tuple(load for b in step_bookings(reservation) for load in loads_of(b, topology))


def volume_note(reservation: Reservation) -> dict[str, Any]:
    """What a volume's audit entries say of it: the bytes asked and the completion."""
    profile = profile_of(reservation)
    if profile is None:
        return {}
    return {"volume": reservation.plan.get("volume"), "completion": profile.end}


def volume_offers(body: Mapping[str, Any], refused: Refused) -> list[dict[str, Any]]:
    """What a refused volume could ask instead: a later deadline, or less by this one."""
    why = refused.why
    if not isinstance(why, VolumeShort):
        return []
    base = {k: v for k, v in body.items() if k not in ("hold", "description")}
    return shortfall_offers(base, why.most_by_deadline, why.earliest_completion)


def shortfall_offers(
    base: Mapping[str, Any], most_by_deadline: int, earliest_completion: int | None
) -> list[dict[str, Any]]:
    """`base` (a body to send again) with the deadline all would make, or the bytes that fit."""
    offers: list[dict[str, Any]] = []
    if earliest_completion is not None:
        deadline = format_instant(earliest_completion)
        offers.append({"kind": "earliest_completion", "body": {**base, "deadline": deadline}})
    if most_by_deadline > 0:
        offers.append({"kind": "most_by_deadline", "body": {**base, "volume": most_by_deadline}})
    return offers
