"""What the reservation service returns: typed values the front ends encode.

The REST API writes them as JSON (`adapters/api/views.py`), the CLI shows
what the API sent; neither reads a service result by key.
"""

from __future__ import annotations

from dataclasses import dataclass

from braid.app.records import Reservation
from braid.core.model.booking import Allocation
from braid.core.planning.decisions import Decision
from braid.core.planning.lifecycle import State, state_at
from braid.core.planning.requests import Request
from braid.core.provisioning.status import Status

__all__ = ["Availability", "MaintenanceDone", "Page", "Rerouted", "Seen"]


@dataclass(frozen=True, slots=True)
class Seen:
    """A stored reservation as seen at `now`: its state follows from the clock."""

    record: Reservation
    now: int
    provisioning: Status | None = None  # None: braid does not program switches here
    replayed: bool = False  # the answer to an Idempotency-Key seen before: nothing was done

    @property
    def state(self) -> State:
        r = self.record
        return state_at(r.state, r.start, r.end, self.now, r.hold_expires_at)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing; `next` is the cursor of the following page, if any."""

    reservations: tuple[Seen, ...]
    next: str | None


@dataclass(frozen=True, slots=True)
class Availability:
    """The planner's answer to a question that books nothing, with the question."""

    decision: Decision
    request: Request


@dataclass(frozen=True, slots=True)
class Rerouted:
    id: str
    allocations: tuple[Allocation, ...]


@dataclass(frozen=True, slots=True)
class MaintenanceDone:
    """A maintenance window booked, the reservations moved around it, those that failed."""

    maintenance: Seen
    rerouted: tuple[Rerouted, ...]
    failed: tuple[tuple[str, str], ...]  # reservation id, why
