"""Decisions of the planner as JSON-ready dicts (the `braid plan` contract, v1)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from braid.core.model.booking import Allocation, Booking
from braid.core.model.intervals import IntervalSet
from braid.core.model.units import FOREVER, to_mbps

CONTRACT_VERSION: Final = 1


def decision(request_id: str, status: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"v": CONTRACT_VERSION, "id": request_id, "status": status}
    out.update({k: v for k, v in fields.items() if v is not None})
    return out


def paths_field(allocations: Iterable[Allocation]) -> list[dict[str, Any]]:
    return [
        {
            "nodes": list(a.path.nodes),
            "links": list(a.path.links),
            "bandwidth": to_mbps(a.bandwidth),
        }
        for a in allocations
    ]


def end_field(end: int) -> int | None:
    """Open-ended bookings have no end on the wire."""
    return None if end >= FOREVER else end


def booking_fields(booking: Booking) -> dict[str, Any]:
    return {
        "start": booking.start,
        "end": end_field(booking.end),
        "bandwidth": to_mbps(booking.bandwidth),
        "paths": paths_field(booking.allocations),
    }


def weights_of(allocations: Sequence[Allocation]) -> list[float]:
    total = sum(a.bandwidth for a in allocations)
    return [round(a.bandwidth / total, 6) for a in allocations] if total else []


def slots_field(slots: IntervalSet) -> list[list[int]]:
    return slots.as_lists()


def error(
    request_id: str, message: str, *, field: str = "", line: int | None = None
) -> dict[str, Any]:
    where = f"line {line}: " if line is not None else ""
    return decision(request_id, "error", reason=f"{where}{message}", field=field or None, line=line)
