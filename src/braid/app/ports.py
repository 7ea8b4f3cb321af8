"""The store as the service sees it; one SQL implementation, one in-memory fake."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from braid.app.records import (
    AuditEntry,
    LinkLoad,
    Reservation,
    TokenInfo,
    TopologyVersion,
    User,
)
from braid.core.planning.lifecycle import State

# Given the loads already booked on the links a change touches (overlapping
# its window), say what would be overbooked; empty means the change fits.
Validator = Callable[[Sequence[LinkLoad]], list[str]]


class ConflictError(Exception):
    """The store refused a change: someone else booked first, or a version moved on."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True, slots=True)
class Change:
    """A reservation written with the loads it puts on links."""

    reservation: Reservation
    loads: tuple[LinkLoad, ...]
    # The topology version the loads were validated against; the store
    # refuses the change (ConflictError) when a newer version exists, so a
    # replica that missed a topology change cannot book with stale capacities.
    topology_version: int | None = None
    # The request that made the change, named in its audit entry.
    request_id: str | None = None
    # More for the audit entry: e.g. why a fail-over moved the reservation.
    note: Mapping[str, Any] = field(default_factory=dict)

    def audit_detail(self, version: int) -> dict[str, Any]:
        """The detail of the audit entry that records this change at `version`."""
        detail: dict[str, Any] = {**self.note, "version": version}
        if self.request_id is not None:
            detail["request_id"] = self.request_id
        return detail


@dataclass(frozen=True, slots=True)
class Filters:
    owner: str | None = None
    # With `at`, the states reservations are in at that instant (a reserved
    # one is active between its start and end, and so on: lifecycle.state_at);
    # without, their stored states.
    states: frozenset[State] | None = None
    at: int | None = None
    start: int | None = None  # overlapping [start, end)
    end: int | None = None
    limit: int = 1000
    # Keyset paging: only reservations after this (start, id) in (start, id) order.
    after: tuple[int, str] | None = None


@dataclass(frozen=True, slots=True)
class WriteStep:
    """`Repository.write` as one step of `Repository.apply`."""

    change: Change
    validate: Validator
    action: str
    expected_version: int | None = None


@dataclass(frozen=True, slots=True)
class StateStep:
    """`Repository.set_state` as one step of `Repository.apply`."""

    reservation_id: str
    state: State
    detail: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TopologyStep:
    """`Repository.put_topology` as one step of `Repository.apply`.

    With `expected`, the step raises ConflictError unless the current
    version is that one (the new data was derived from it); `detail` goes
    into the audit entry (e.g. which link changed state).
    """

    data: Mapping[str, Any]
    expected: int | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


Step = WriteStep | StateStep | TopologyStep


class Repository(Protocol):
    """Every write is one transaction: all of it happens, or none."""

    # -- reservations --------------------------------------------------------
    def write(
        self,
        change: Change,
        *,
        validate: Validator,
        now: int,
        actor: str,
        action: str,
        expected_version: int | None = None,
        counting: Callable[[Reservation], bool] | None = None,
    ) -> Reservation:
        """Insert or replace `change.reservation` (same id) atomically.

        Inside one transaction: lock the links in `change.loads` (so no other
        writer can add load to them until commit), read the loads of every
        other reservation on those links overlapping the window for which
        `counting(reservation)` is true (without `counting`: that still
        counts against capacity at `now` by the lifecycle's rule, which the
        store may evaluate itself, cheaper), call `validate`; when it reports
        problems raise ConflictError and write nothing. When `expected_version` is
        given and the stored version differs, raise ConflictError. Otherwise store
        the reservation (version + 1 when replacing), its loads, an audit
        entry, and advance the change cursor. Returns the reservation as a
        later `get` would give it.
        """
        ...

    def write_new(
        self, items: Sequence[tuple[WriteStep, str]], *, now: int
    ) -> list[Reservation | ConflictError]:
        """New reservations, each (step, actor) written or refused on its own, in one transaction.

        Each is checked like `write` (without `counting`: the lifecycle's
        rule at `now`), in order, seeing the loads of those before it that
        were accepted; one whose id exists already, or that expects a
        version other than 0, is refused. The result has, in order, the
        stored reservation or the ConflictError that refused it. An
        exception (e.g. the topology moved on) means nothing was written.
        """
        ...

    def set_state(
        self, reservation_id: str, state: State, *, now: int, actor: str, detail: Mapping[str, Any]
    ) -> Reservation:
        """Move one reservation to `state`, with an audit entry; version + 1.

        Asking for the state it has already changes nothing; a step the
        lifecycle forbids raises ConflictError; an unknown id raises KeyError.
        """
        ...

    def apply(
        self,
        steps: Sequence[Step],
        *,
        now: int,
        actor: str,
        counting: Callable[[Reservation], bool] | None = None,
    ) -> list[Reservation | TopologyVersion]:
        """Every step in one transaction, in order, each seeing the ones before.

        Any ConflictError or KeyError undoes all of them: an operator action
        that moves several reservations (maintenance, a topology change)
        happens whole or not at all.
        """
        ...

    def cursor(self) -> int:
        """The newest change cursor (`changes_since(0)`'s, without reading the rows)."""
        ...

    def get(self, reservation_id: str) -> Reservation | None: ...

    def keyed(self, owner: str, key: str) -> Reservation | None:
        """The reservation `owner` created with Idempotency-Key `key`, if any."""
        ...

    def find(self, filters: Filters) -> list[Reservation]: ...

    def booked(self) -> list[Reservation]:
        """Every reservation whose stored state is held, reserved or active."""
        ...

    def due(self, now: int) -> list[Reservation]:
        """Booked reservations the clock has moved on by `now`, stored state unchanged.

        Holds past their expiry, reserved ones past their start, reserved or
        active ones past their end: what a lifecycle tick must record.
        """
        ...

    def changes_since(self, cursor: int) -> tuple[list[Reservation], int]:
        """Reservations written after `cursor` (by any replica), and the new cursor.

        Must never miss a change: a change committed after a call returned
        cursor c is returned by the next call with c (e.g. the cursor is a
        counter bumped under a row lock held until commit, so commit order and
        cursor order agree).
        """
        ...

    def audit(self, reservation_id: str | None = None, limit: int = 1000) -> list[AuditEntry]: ...

    # -- topology ----------------------------------------------------------
    def topology(self) -> TopologyVersion | None: ...

    def topology_version(self) -> int:
        """The current topology's version (0 when there is none), without reading it."""
        ...

    def topology_versions(self) -> list[TopologyVersion]:
        """Every stored topology version, oldest first."""
        ...

    def put_topology(self, data: Mapping[str, Any], *, now: int, actor: str) -> TopologyVersion: ...

    def put_first_topology(
        self, data: Mapping[str, Any], *, now: int, actor: str
    ) -> TopologyVersion:
        """Store `data` as version 1 if there is no topology yet, else store nothing.

        Check and store are one transaction, so of several replicas starting
        at once on an empty store exactly one stores it. Returns the current
        topology either way.
        """
        ...

    # -- users and tokens ------------------------------------------------------
    def add_token(
        self,
        token_hash: str,
        user: User,
        *,
        now: int,
        expires_at: int | None = None,
        actor: str | None = None,
    ) -> TokenInfo:
        """Create or update `user` and give it the token, with an audit entry by `actor`.

        (`actor` defaults to the user.) A known hash raises ConflictError.
        """
        ...

    def token(self, token_hash: str) -> TokenInfo | None:
        """The token with this hash, expired and revoked ones included; None if unknown."""
        ...

    def tokens(self, user: str | None = None) -> list[TokenInfo]:
        """Every token (of one user), by creation time then id."""
        ...

    def revoke_tokens(
        self, *, now: int, actor: str, prefix: str = "", user: str | None = None
    ) -> list[TokenInfo]:
        """Revoke, in one transaction, every unrevoked token whose hash starts with `prefix`
        (and that belongs to `user`, when given); an audit entry each. Returns them revoked.
        """
        ...

    def set_user_tz(self, user: str, tz: str | None) -> None:
        """Store `user`'s time zone setting (None: none); the caller checked the name.
        A user the store does not know (no token yet) raises NotFoundError."""
        ...


# -- change feed -------------------------------------------------------------------

# Cursor values this process's own writes committed, each with the
# (reservation id, version) pairs it wrote.
Written = Mapping[int, Collection[tuple[str, int]]]


@dataclass(frozen=True, slots=True)
class FeedNews:
    """What a change feed knows of the store's changes past some cursor."""

    # Counts (re)connections. Changes committed before an epoch began may
    # never be heard of: a reader reads the store once under each new epoch.
    epoch: int
    # The highest cursor value heard of (notified, or written by this process).
    latest: int
    # This process's own writes past the cursor (cursor value -> (id, version)
    # pairs written under it), as far as the feed still remembers them.
    written: Mapping[int, frozenset[tuple[str, int]]]


class ChangeFeed(Protocol):
    """Tells a replica when the store's change cursor moves, so it need not ask.

    Optional: without one (SQLite, the in-memory store) a replica reads the
    store's changes before every decision.
    """

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def news(self, since: int) -> FeedNews | None:
        """What is known past cursor `since`, or None when the feed cannot be trusted now.

        None while not listening (starting, connection lost, stopped): the
        caller must then read the store. Among values past `since`, one not in
        `written` is another writer's change (or one this process wrote but
        has not reported yet).
        """
        ...
