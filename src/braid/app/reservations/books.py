"""The seam the reservation modules share: the store, this replica's mirror, the clock.

The service and the modules beside it (operator actions, link states,
link views, history, observation) all read and write through one `Books`:
it is the unit of work of the reservation service. A write is planned on
the mirror and re-validated by the store in the same transaction; when the
store refuses it (someone else booked first), `retry` plans it again on a
fresher view, a bounded number of times.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from braid.app.errors import RejectedError
from braid.app.ports import Change, ConflictError, Repository, Step, Validator, WriteStep
from braid.app.records import Reservation, TopologyVersion
from braid.app.request_context import current_request
from braid.app.reservations.mirror import Mirror, as_bookings
from braid.core.model.loads import LinkLoad, capacity_lookup, loads_of, peak_problems
from braid.core.model.topology import Topology
from braid.core.planning.lifecycle import counts_against_capacity

__all__ = ["ATTEMPTS", "Books", "counting_at"]

# How many times a write refused for a conflict is planned again before giving up.
ATTEMPTS: Final = 5

T = TypeVar("T")


def counting_at(now: int) -> Callable[[Reservation], bool]:
    """Which stored reservations still take bandwidth, as writers see it at `now`."""
    return lambda r: counts_against_capacity(r.state, r.end, now, r.hold_expires_at)


class Books:
    """The reservations' store, this replica's mirror of it, and the one way to write."""

    def __init__(self, store: Repository, clock: Callable[[], int]) -> None:
        self.store = store
        self.clock = clock
        self._mirror: Mirror | None = None
        # Run after every booking change (the provisioner's loop wakes on them).
        self.on_change: list[Callable[[], None]] = []

    # -- the mirror --------------------------------------------------------------

    def attach(self, mirror: Mirror) -> None:
        self._mirror = mirror

    @property
    def mirror(self) -> Mirror:
        if self._mirror is None:
            raise RuntimeError("ReservationService.start() has not run")
        return self._mirror

    @property
    def topology(self) -> Topology:
        return self.mirror.topology

    def changed(self) -> None:
        for callback in self.on_change:
            callback()

    # -- reads -------------------------------------------------------------------

    def booked(self, now: int) -> list[Reservation]:
        """Every stored reservation still taking bandwidth at `now`."""
        counting = counting_at(now)
        return [r for r in self.store.booked() if counting(r)]

    # -- writes ------------------------------------------------------------------

    def retry(self, attempt: Callable[[int, bool], T], gave_up: str) -> T:
        """`attempt(now, refused)` until the store takes its write, at most ATTEMPTS times.

        An attempt raises ConflictError when the store refused its write
        (after undoing whatever it noted in the mirror); `refused` tells the
        next one so, so that it reads the store whatever the change feed says.
        """
        refused = False
        for _ in range(ATTEMPTS):
            try:
                return attempt(self.clock(), refused)
            except ConflictError:
                refused = True
        raise RejectedError(gave_up)

    def apply(
        self, steps: Sequence[Step], now: int, actor: str
    ) -> list[Reservation | TopologyVersion]:
        """Every step in one transaction, bandwidth counted as the lifecycle says at `now`."""
        return self.store.apply(steps, now=now, actor=actor, counting=counting_at(now))

    def write_step(
        self,
        record: Reservation,
        action: str,
        expected: int | None = None,
        note: Mapping[str, Any] | None = None,
    ) -> WriteStep:
        """A store write of `record` that re-validates its loads against everyone else's.

        `note` goes into the write's audit entry (e.g. a confirm's idempotency key).
        """
        topology = self.topology
        # A volume's loads are its steps', each over the step's window.
        loads = tuple(load for b in as_bookings(record) for load in loads_of(b, topology))
        version = self.mirror.topology_version
        change = Change(record, loads, version, current_request(), note or {})
        return WriteStep(change, load_validator(topology, loads), action, expected)

    def write_record(
        self,
        record: Reservation,
        actor: str,
        action: str,
        now: int,
        expected: int | None = None,
        note: Mapping[str, Any] | None = None,
    ) -> Reservation:
        step = self.write_step(record, action, expected, note)
        # Without `counting`, the store applies the lifecycle's rule at `now`
        # itself (in SQL), the same rule `counting_at` spells out.
        stored = self.store.write(
            step.change,
            validate=step.validate,
            now=now,
            actor=actor,
            action=action,
            expected_version=expected,
        )
        # The mirror learns the booking at once; other replicas' changes are
        # read before the next decision, so there is no second catch-up here.
        self.mirror.learn(stored, now)
        return stored


def load_validator(topology: Topology, loads: Sequence[LinkLoad]) -> Validator:
    """What a store write checks: `loads` on top of everyone else's keep within capacity."""
    capacity = capacity_lookup(topology)

    def validate(existing: Sequence[LinkLoad]) -> list[str]:
        return peak_problems([*existing, *loads], capacity)

    return validate
