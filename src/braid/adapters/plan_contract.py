"""The `braid plan` contract, v1: typed decisions as JSON-ready dicts.

The key order of each kind of decision is part of the contract (outside
checkers diff our lines), so each encoder lists its fields in that order;
fields without a value are left out. Bandwidths go out in Mbit/s.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import singledispatch
from typing import Any, Final

from braid.core.model.booking import Allocation, Booking
from braid.core.model.units import FOREVER, to_mbps
from braid.core.planning.decisions import (
    Decision,
    Invalid,
    QuickestAnswer,
    Refused,
    Released,
    Reserved,
    SlotsAnswer,
    TenantReserved,
    VolumeReleased,
    VolumeReserved,
    WidestAnswer,
    share_weights,
)
from braid.core.planning.refusals import VolumeShort
from braid.core.volume import Profile

__all__ = ["CONTRACT_VERSION", "encode", "paths_field", "profile_field"]

CONTRACT_VERSION: Final = 1


def encode(decision: Decision) -> dict[str, Any]:
    """One decision line of the contract."""
    return _encode(decision)


def paths_field(allocations: Iterable[Allocation]) -> list[dict[str, Any]]:
    return [
        {
            "nodes": list(a.path.nodes),
            "links": list(a.path.links),
            "bandwidth": to_mbps(a.bandwidth),
        }
        for a in allocations
    ]


def profile_field(profile: Profile) -> list[dict[str, Any]]:
    """A rate profile's steps: `[{start, end, rate, paths}]`, rates in Mbit/s."""
    return [
        {
            "start": step.start,
            "end": step.end,
            "rate": to_mbps(step.rate),
            "paths": paths_field(step.allocations),
        }
        for step in profile.steps
    ]


def _profile(profile: Profile) -> tuple[tuple[str, Any], ...]:
    return (
        ("start", profile.start),
        ("end", profile.end),
        ("completion", profile.end),
        ("peak", to_mbps(profile.peak)),
        ("profile", profile_field(profile)),
    )


def _line(request_id: str, status: str, *fields: tuple[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"v": CONTRACT_VERSION, "id": request_id, "status": status}
    out.update((k, v) for k, v in fields if v is not None)
    return out


def _booking(booking: Booking) -> tuple[tuple[str, Any], ...]:
    end = None if booking.end >= FOREVER else booking.end  # open-ended: no end on the wire
    return (
        ("start", booking.start),
        ("end", end),
        ("bandwidth", to_mbps(booking.bandwidth)),
        ("paths", paths_field(booking.allocations)),
    )


def _mbps(bps: int | None) -> float | None:
    return None if bps is None else to_mbps(bps)


@singledispatch
def _encode(decision: object) -> dict[str, Any]:
    raise TypeError(f"not a planner decision: {decision!r}")


@_encode.register
def _(d: Reserved) -> dict[str, Any]:
    plan = d.plan
    return _line(
        d.id,
        "reserved",
        *_booking(d.booking),
        ("split", plan.mode),
        ("weights", list(plan.weights)),
        ("mdi", round(plan.mdi, 6)),
        ("resequence", plan.resequence),
        ("recommended_streams", plan.recommended_streams),
        ("max_flow", _mbps(d.max_flow)),
        ("max_bandwidth", _mbps(d.max_bandwidth)),
    )


@_encode.register
def _(d: TenantReserved) -> dict[str, Any]:
    return _line(
        d.id,
        "reserved",
        ("tenant", d.tenant),
        *_booking(d.booking),
        ("weights", list(share_weights(d.booking.allocations))),
        ("shortfall", to_mbps(d.shortfall) if d.shortfall else None),
        ("reason", d.reason),
        ("reallocated", [{"id": b.id, "paths": paths_field(b.allocations)} for b in d.reallocated]),
    )


@_encode.register
def _(d: VolumeReserved) -> dict[str, Any]:
    return _line(d.id, "reserved", ("volume", d.volume), *_profile(d.profile))


@_encode.register
def _(d: QuickestAnswer) -> dict[str, Any]:
    return _line(d.id, "answered", ("volume", d.volume), *_profile(d.profile))


@_encode.register
def _(d: VolumeReleased) -> dict[str, Any]:
    return _line(d.id, "released", *_profile(d.profile))


@_encode.register
def _(d: Refused) -> dict[str, Any]:
    alternatives = None
    if d.alternatives is not None:
        found = d.alternatives
        alternatives = {
            k: v
            for k, v in (
                ("earliest_start", found.earliest_start),
                ("max_flow", _mbps(found.max_flow)),
                ("max_bandwidth", to_mbps(found.max_bandwidth)),
            )
            if v is not None
        }
    volume = d.why if isinstance(d.why, VolumeShort) else None
    return _line(
        d.id,
        "rejected",
        ("reason", d.reason or None),
        ("max_bandwidth", _mbps(d.max_bandwidth)),
        ("tenant", d.tenant),
        ("alternatives", alternatives),
        ("most_by_deadline", None if volume is None else volume.most_by_deadline),
        # Absent when the volume can never all be moved.
        ("earliest_completion", None if volume is None else volume.earliest_completion),
    )


@_encode.register
def _(d: WidestAnswer) -> dict[str, Any]:
    return _line(
        d.id,
        "answered",
        ("start", d.start),
        ("end", d.end),
        ("max_bandwidth", to_mbps(d.max_bandwidth)),
        ("paths", paths_field(d.allocations)),
        ("max_flow", to_mbps(d.max_flow)),
    )


@_encode.register
def _(d: SlotsAnswer) -> dict[str, Any]:
    return _line(
        d.id,
        "answered",
        ("start", d.start),
        ("end", d.end),
        ("duration", d.duration),
        ("bandwidth", to_mbps(d.bandwidth)),
        ("slots", d.slots.as_lists()),
    )


@_encode.register
def _(d: Released) -> dict[str, Any]:
    return _line(d.id, "released", *_booking(d.booking))


@_encode.register
def _(d: Invalid) -> dict[str, Any]:
    where = f"line {d.line}: " if d.line is not None else ""
    return _line(
        d.id,
        "error",
        ("reason", f"{where}{d.reason}"),
        ("field", d.field or None),
        ("line", d.line),
    )
