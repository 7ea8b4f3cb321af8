"""What the planner decides, as typed values: one class per kind of answer.

Bandwidths are bit/s and instants epoch seconds, as everywhere in `core`;
the wire formats (the `braid plan` contract, REST bodies) are written from
these by adapters. A refusal says why with a typed value (`refusals.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.model.booking import Allocation, Booking
from braid.core.model.intervals import IntervalSet
from braid.core.model.units import format_bandwidth
from braid.core.multipath import SplitPlan
from braid.core.planning.refusals import TenantShort, Why, WriteInstant
from braid.core.volume import Profile

__all__ = [
    "Alternatives",
    "Decision",
    "Invalid",
    "QuickestAnswer",
    "Refused",
    "Released",
    "Reserved",
    "SlotsAnswer",
    "TenantReserved",
    "VolumeReleased",
    "VolumeReserved",
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
    """A tenant's booking; `reallocated` are other tenants' bookings it moved.

    `why` says why it is short of what was asked, when it is (`shortfall` > 0).
    """

    id: str
    tenant: str
    booking: Booking
    shortfall: int
    why: TenantShort | None
    reallocated: tuple[Booking, ...]

    @property
    def reason(self) -> str | None:
        """`why` in words, with epoch seconds."""
        return None if self.why is None else self.why.text()


@dataclass(frozen=True, slots=True)
class VolumeReserved:
    """A volume booked as a rate profile: one window booking per step (`bookings`).

    `volume` is the bytes asked; the profile moves at least that (its last
    step is rounded up to a whole second).
    """

    id: str
    profile: Profile
    volume: int
    symmetric: bool = True

    @property
    def completion(self) -> int:
        return self.profile.end

    @property
    def bookings(self) -> tuple[Booking, ...]:
        return self.profile.bookings(self.id, symmetric=self.symmetric)


@dataclass(frozen=True, slots=True)
class QuickestAnswer:
    """The earliest-completing profile for `volume` bytes from `not_before`, not booked."""

    id: str
    not_before: int
    volume: int
    profile: Profile

    @property
    def completion(self) -> int:
        return self.profile.end


@dataclass(frozen=True, slots=True)
class Alternatives:
    """What the caller could accept instead of a refused request.

    `max_flow` is set when a split over several paths could carry a request
    asked on one path: the max-flow bound, at least what was asked.
    """

    max_bandwidth: int
    earliest_start: int | None = None
    max_flow: int | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing fits, for the reason `why`. `alternatives` for booking requests;
    `max_bandwidth` (0) when the request asked for the highest bandwidth;
    `tenant` for tenant requests."""

    id: str
    why: Why
    alternatives: Alternatives | None = None
    max_bandwidth: int | None = None
    tenant: str | None = None

    def text(self, when: WriteInstant = str) -> str:
        """Why, then the alternatives, in words; `when` writes the instants."""
        parts = [self.why.text(when)]
        found = self.alternatives
        if found is not None:
            if found.earliest_start is not None:
                start = when(found.earliest_start)
                parts.append(f"earliest feasible start for the same duration: {start}")
            if found.max_flow is not None:
                parts.append(
                    "a split over several paths (max_paths >= 2) could carry it: "
                    f"max-flow bound {format_bandwidth(found.max_flow)}"
                )
            best = format_bandwidth(found.max_bandwidth)
            parts.append(f"highest feasible bandwidth in the window: {best}")
        return "; ".join(parts)

    @property
    def reason(self) -> str:
        """`text` with epoch seconds, as the plan contract writes it."""
        return self.text()


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
class VolumeReleased:
    """A volume reservation released: every step of its profile."""

    id: str
    profile: Profile


@dataclass(frozen=True, slots=True)
class Invalid:
    """A request the planner cannot read: `field` names what is wrong, `line` where."""

    id: str
    reason: str
    field: str = ""
    line: int | None = None


Decision = (
    Reserved
    | TenantReserved
    | VolumeReserved
    | Refused
    | WidestAnswer
    | SlotsAnswer
    | QuickestAnswer
    | Released
    | VolumeReleased
    | Invalid
)


def share_weights(allocations: Sequence[Allocation]) -> tuple[float, ...]:
    """Each path's share of the total, rounded as the contract gives them."""
    total = sum(a.bandwidth for a in allocations)
    return tuple(round(a.bandwidth / total, 6) for a in allocations) if total else ()


def reason_of(decision: Decision) -> str:
    """Why nothing was booked, for a refusal or an invalid request; "" otherwise."""
    return decision.reason if isinstance(decision, Refused | Invalid) else ""
