"""What is booked on the links: every link's level at an instant, one link's step function.

Read from the replica's mirror (after catching up with the store), so the
answers are the same timelines admission plans in. Any signed-in caller may
ask: the levels are sums over everyone's bookings, as availability answers are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from braid.app.records import User
from braid.app.reservations.books import Books
from braid.core.errors import InputError
from braid.core.model.booking import Booking
from braid.core.model.instants import parse_instant
from braid.core.model.timeline import Step

__all__ = [
    "Levels",
    "LinkLevel",
    "LinkUsage",
    "MaintenanceWindow",
    "levels_at",
    "may_be_maintenance",
    "usage",
]

# A browser draws the answer: a year of steps is plenty, and bounds the work.
MAX_RANGE_SECONDS: Final = 366 * 86400
# Maintenance bookings are stored with ids of this prefix (operations.maintenance);
# checking the prefix first spares a store read for every ordinary booking.
_MAINTENANCE_ID: Final = "m-"


@dataclass(frozen=True, slots=True)
class LinkLevel:
    """One link's booked bit/s in each direction at an instant."""

    id: str
    a: str
    b: str
    capacity: int
    forward: int  # a -> b
    backward: int  # b -> a


@dataclass(frozen=True, slots=True)
class Levels:
    at: int
    links: tuple[LinkLevel, ...]


@dataclass(frozen=True, slots=True)
class MaintenanceWindow:
    id: str
    start: int
    end: int
    reason: str


@dataclass(frozen=True, slots=True)
class LinkUsage:
    """One link's booked step function in each direction over [start, end)."""

    id: str
    a: str
    b: str
    capacity: int
    start: int
    end: int
    forward: tuple[Step, ...]
    backward: tuple[Step, ...]
    maintenance: tuple[MaintenanceWindow, ...]


def levels_at(books: Books, user: User, at: object | None) -> Levels:
    """Every link's booked level at `at` (now when None)."""
    # any signed-in caller (the route has authenticated them), in their own zone
    now = books.clock()
    instant = now if at in (None, "") else parse_instant(at, "at", zone=user.tz, now=now)
    mirror = books.mirror
    mirror.catch_up(now)
    with mirror.lock:
        network = mirror.network
        levels = tuple(
            LinkLevel(
                link.id,
                link.a,
                link.b,
                link.capacity,
                network.timeline(link.id, True).level_at(instant),
                network.timeline(link.id, False).level_at(instant),
            )
            for link in network.topology.links.values()
        )
    return Levels(instant, levels)


def usage(books: Books, user: User, link: str, start: object, end: object) -> LinkUsage:
    """`link`'s booked levels over [start, end), with the maintenance windows on it."""
    now = books.clock()
    first = parse_instant(start, "start", zone=user.tz, now=now)
    last = parse_instant(end, "end", zone=user.tz, now=now)
    if last <= first:
        raise InputError("end", "must be after start")
    if last - first > MAX_RANGE_SECONDS:
        raise InputError("end", "the range may span at most 366 days")
    mirror = books.mirror
    mirror.catch_up(books.clock())
    with mirror.lock:
        network = mirror.network
        network.topology.require_link(link, "link")
        spec = network.topology.links[link]
        forward = tuple(network.timeline(link, True).steps(first, last))
        backward = tuple(network.timeline(link, False).steps(first, last))
        candidates = [b for b in network.bookings.values() if _maintains(b, link, first, last)]
    windows = _windows(books, candidates)
    return LinkUsage(link, spec.a, spec.b, spec.capacity, first, last, forward, backward, windows)


def may_be_maintenance(booking_id: str) -> bool:
    """Whether a booking's id is a maintenance booking's kind of id (the record says for sure)."""
    return booking_id.startswith(_MAINTENANCE_ID)


def _maintains(booking: Booking, link: str, start: int, end: int) -> bool:
    if not may_be_maintenance(booking.id) or booking.end <= start:
        return False
    if booking.start >= end:
        return False
    return any(link in a.path.links for a in booking.allocations)


def _windows(books: Books, bookings: list[Booking]) -> tuple[MaintenanceWindow, ...]:
    out = []
    for booking in sorted(bookings, key=lambda b: (b.start, b.id)):
        record = books.store.get(booking.id)
        if record is None or record.kind != "maintenance":
            continue
        reason = str(record.request.get("reason", ""))
        out.append(MaintenanceWindow(record.id, record.start, record.end, reason))
    return tuple(out)
