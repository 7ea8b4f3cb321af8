"""What a tenant asks for, what it holds, and what an allocation changed."""

from __future__ import annotations

from dataclasses import dataclass, replace

from braid.core.model.booking import Allocation, Booking
from braid.core.model.paths import Path


@dataclass(frozen=True, slots=True)
class TenantRequest:
    """A tenant's throughput requirement for [start, end) between two nodes.

    `main_path` is the node list the tenant's own controller routed the flow
    on; None means "use the shortest path by latency, whatever its load".
    An open-ended tenant passes `braid.core.model.units.FOREVER` as `end`.
    """

    id: str
    tenant: str
    src: str
    dst: str
    throughput: int
    start: int
    end: int
    main_path: tuple[str, ...] | None = None
    symmetric: bool = True


@dataclass(frozen=True, slots=True)
class TenantState:
    """What one request holds now: its main-path share and its sub-paths.

    `main_path` is the resolved main path (links chosen) even when nothing
    could be booked on it (`main` is None then), so that a later reallocation
    can still grow the request on its own path first.
    """

    request: TenantRequest
    main_path: Path | None
    main: Allocation | None
    subs: tuple[Allocation, ...]

    @property
    def allocations(self) -> tuple[Allocation, ...]:
        return ((self.main,) if self.main is not None else ()) + self.subs

    @property
    def granted(self) -> int:
        return sum(a.bandwidth for a in self.allocations)

    @property
    def shortfall(self) -> int:
        return self.request.throughput - self.granted

    def booking(self) -> Booking | None:
        """The booking the network holds for this request (None when it holds nothing)."""
        return self.booking_or_empty() if self.allocations else None

    def booking_or_empty(self) -> Booking:
        """Like `booking`, but an empty booking rather than None, for reports."""
        r = self.request
        return Booking(r.id, r.start, r.end, self.allocations, r.symmetric)

    def with_main(self, bandwidth: int) -> TenantState:
        assert self.main_path is not None
        return replace(self, main=Allocation(self.main_path, bandwidth))

    def with_sub(self, allocation: Allocation) -> TenantState:
        """Add a sub-path; one already on the same path grows instead, so the
        rule compiler never sees two buckets for one path."""
        subs = list(self.subs)
        for i, sub in enumerate(subs):
            if sub.path == allocation.path:
                subs[i] = Allocation(sub.path, sub.bandwidth + allocation.bandwidth)
                return replace(self, subs=tuple(subs))
        return replace(self, subs=(*subs, allocation))

    def without_subs(self, indices: frozenset[int]) -> TenantState:
        kept = tuple(s for i, s in enumerate(self.subs) if i not in indices)
        return replace(self, subs=kept)


@dataclass(frozen=True, slots=True)
class TenantOutcome:
    """The result of one `allocate`.

    `reallocated` holds the new booking of every *other* request whose paths
    changed because its sub-paths were preempted; one that could not be
    placed again anywhere appears with no allocations (and is no longer
    booked). `shortfall` is the requirement minus `granted`; `reason` says why
    whenever it is positive. `joined` is false when no main path joined the
    request's ends.
    """

    request_id: str
    granted: int
    main: Allocation | None
    subs: tuple[Allocation, ...]
    booking: Booking | None
    reallocated: tuple[Booking, ...]
    shortfall: int
    reason: str | None
    joined: bool = True
