"""What the planner decides, as typed values: one class per kind of answer.

Bandwidths are bit/s and instants epoch seconds, as everywhere in `core`;
the wire formats (the `braid plan` contract, REST bodies) are written from
these by adapters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.model.booking import Allocation, Booking
from braid.core.model.intervals import IntervalSet
from braid.core.multipath import SplitPlan

__all__ = [
    "Alternatives",
    "Decision",
    "Invalid",
    "Refused",
    "Released",
    "Reserved",
    "SlotsAnswer",
    "TenantReserved",
    "WidestAnswer",
    "reason_of",
    "share_weights",
]


@dataclass(frozen=True, slots=True)
class Reserved:
    """A booking the planner made (or would make, for `decide`).

    `max_flow` is the max-flow bound between the ends, reported for split
    requests only; `max_bandwidth` is set when the request asked for the
    highest bandwidth and reserved it.
    """

    id: str
    booking: Booking
    plan: SplitPlan
    max_flow: int | None = None
    max_bandwidth: int | None = None


@dataclass(frozen=True, slots=True)
class TenantReserved:
    """A tenant's booking; `reallocated` are other tenants' bookings it moved."""

    id: str
    tenant: str
    booking: Booking
    shortfall: int
    reason: str | None
    reallocated: tuple[Booking, ...]


@dataclass(frozen=True, slots=True)
class Alternatives:
    """What the caller could accept instead of a refused request."""

    max_bandwidth: int
    earliest_start: int | None = None
    max_flow: int | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing fits. `alternatives` for booking requests; `max_bandwidth` (0) when the
    request asked for the highest bandwidth; `tenant` for tenant requests."""

    id: str
    reason: str
    alternatives: Alternatives | None = None
    max_bandwidth: int | None = None
    tenant: str | None = None


@dataclass(frozen=True, slots=True)
class WidestAnswer:
    """The highest bandwidth in [start, end), on these paths, without booking it."""

    id: str
    start: int
    end: int
    max_bandwidth: int
    allocations: tuple[Allocation, ...]
    max_flow: int


@dataclass(frozen=True, slots=True)
class SlotsAnswer:
    """Every start in [start, end - duration] at which `bandwidth` fits for `duration`."""

    id: str
    start: int
    end: int
    duration: int
    bandwidth: int
    slots: IntervalSet


@dataclass(frozen=True, slots=True)
class Released:
    id: str
    booking: Booking


@dataclass(frozen=True, slots=True)
class Invalid:
    """A request the planner cannot read: `field` names what is wrong, `line` where."""

    id: str
    reason: str
    field: str = ""
    line: int | None = None


Decision = Reserved | TenantReserved | Refused | WidestAnswer | SlotsAnswer | Released | Invalid


def share_weights(allocations: Sequence[Allocation]) -> tuple[float, ...]:
    """Each path's share of the total, rounded as the contract gives them."""
    total = sum(a.bandwidth for a in allocations)
    return tuple(round(a.bandwidth / total, 6) for a in allocations) if total else ()


def reason_of(decision: Decision) -> str:
    """Why nothing was booked, for a refusal or an invalid request; "" otherwise."""
    return decision.reason if isinstance(decision, Refused | Invalid) else ""
