"""The booking policy at admission: the owner's other bookings, and one admission per owner.

The rules themselves are pure (`core.policy`); this module reads what a
quota needs from the store and serialises an owner's admissions while a
quota applies, so two bookings admitted at once cannot both fit under it
(per replica: see docs/operations.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from braid.app.ports import Filters, Repository
from braid.app.records import Reservation
from braid.app.reservations.volumes import profile_of
from braid.core.planning.lifecycle import counts_against_capacity
from braid.core.policy import Booked, Limits, Violation, check_booking, check_steps

__all__ = ["OwnerLocks", "policy_violation"]


def policy_violation(
    repo: Repository, limits: Limits, record: Reservation, now: int
) -> Violation | None:
    """The first rule `record` breaks, counting the owner's other live bookings for a quota."""
    others = _owned_bookings(repo, record, now, record.start, record.end) if limits.quota else ()
    owned = 0
    if limits.byte_quota is not None:
        # Every booking that has not ended counts, wherever its window lies.
        owned = sum(b.bytes for b in _owned_bookings(repo, record, now, now, _FOREVER))
    if profile_of(record) is not None:
        steps = _booked(record)
        return check_steps(
            limits, src=record.src, dst=record.dst, steps=steps, now=now, others=others,
            owned_bytes=owned,
        )  # fmt: skip
    return check_booking(
        limits,
        src=record.src,
        dst=record.dst,
        start=record.start,
        end=record.end,
        bandwidth=record.bandwidth,
        now=now,
        others=others,
        owned_bytes=owned,
    )


_FOREVER = 2**62


def _owned_bookings(
    repo: Repository, record: Reservation, now: int, start: int, end: int
) -> list[Booked]:
    """The owner's other live bookings overlapping [start, end)."""
    found = repo.find(Filters(owner=record.owner, start=start, end=end, limit=100_000))
    return [
        booked
        for r in found
        if r.id != record.id and counts_against_capacity(r.state, r.end, now, r.hold_expires_at)
        for booked in _booked(r)
    ]


def _booked(r: Reservation) -> list[Booked]:
    """What a reservation books over time: its window, or a volume's every step at its rate."""
    profile = profile_of(r)
    if profile is None:
        return [Booked(r.start, r.end, r.bandwidth)]
    return [Booked(step.start, step.end, step.rate) for step in profile.steps]


class OwnerLocks:
    """One lock per owner, taken only when a rule (the quota) needs it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @contextmanager
    def held(self, owner: str, needed: bool) -> Iterator[None]:
        if not needed:
            yield
            return
        with self._guard:
            lock = self._locks.setdefault(owner, threading.Lock())
        with lock:
            yield
