"""`MemoryRepository`: the store as a fake, for service tests and single-process demos.

It keeps the SQL store's semantics (the same contract tests run on both):
one lock makes every call atomic, writes validate against the other counting
reservations' loads, versions rise by one per change, every change leaves an
audit entry, and a cursor counter stamps each change for `changes_since`.
Mappings are stored as JSON would give them back, so values that a database
could not store fail here too.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from braid.app.errors import NotFoundError
from braid.app.ports import (
    Change,
    ConflictError,
    Filters,
    StateStep,
    Step,
    Validator,
    WriteStep,
)
from braid.app.records import (
    AuditEntry,
    LinkLoad,
    Reservation,
    TokenInfo,
    TopologyVersion,
    User,
    token_entry,
    token_id,
)
from braid.core.planning.lifecycle import (
    BOOKED,
    State,
    counts_against_capacity,
    state_at,
    transition_problem,
)


def _as_json(data: Mapping[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(dict(data)))
    return loaded


class MemoryRepository:
    """A `braid.app.ports.Repository` in memory; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reservations: dict[str, Reservation] = {}
        self._loads: dict[str, tuple[LinkLoad, ...]] = {}
        self._on_link: defaultdict[str, set[str]] = defaultdict(set)  # link -> reservation ids
        self._stamps: dict[str, int] = {}  # reservation id -> cursor value of its last change
        self._seq = 0
        self._audit: list[AuditEntry] = []
        self._topologies: list[TopologyVersion] = []
        self._users: dict[str, User] = {}
        self._tokens: dict[str, TokenInfo] = {}  # token hash -> the token (its role unused)

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
        """See `SqlRepository.write`: the same checks, in the same order."""
        with self._lock:
            step = WriteStep(change, validate, action, expected_version)
            return self._write(step, now=now, actor=actor, counting=counting)

    def _write(
        self,
        step: WriteStep,
        *,
        now: int,
        actor: str,
        counting: Callable[[Reservation], bool] | None,
    ) -> Reservation:
        change = step.change
        new = change.reservation
        old = self._reservations.get(new.id)
        self._check(new, old, step.expected_version)
        self._check_topology(change.topology_version)
        if counting is None:
            counting = _counting_at(now)
        problems = step.validate(self._other_loads(change, counting))
        if problems:
            raise ConflictError(problems)
        stored = replace(
            new,
            request=_as_json(new.request),
            plan=_as_json(new.plan),
            version=1 if old is None else old.version + 1,
            created_at=(new.created_at or now) if old is None else old.created_at,
            updated_at=now,
        )
        self._put(stored, change.loads)
        from_state = None if old is None else old.state.value
        detail = change.audit_detail(stored.version)
        self._log(AuditEntry(now, actor, new.id, step.action, from_state, new.state.value, detail))
        return stored

    def _check(self, new: Reservation, old: Reservation | None, expected: int | None) -> None:
        stored = 0 if old is None else old.version
        if expected is not None and stored != expected:
            raise ConflictError([f"reservation {new.id}: version is {stored}, expected {expected}"])
        for other in self._reservations.values():
            if other.token == new.token and other.id != new.id:
                raise ConflictError([f"token of reservation {new.id} is used by {other.id}"])
            if (
                new.idempotency_key is not None
                and (other.owner, other.idempotency_key) == (new.owner, new.idempotency_key)
                and other.id != new.id
            ):  # the SQL store's unique index on (owner, idempotency_key)
                raise ConflictError([f"idempotency key of {new.id} is used by {other.id}"])

    def _check_topology(self, version: int | None) -> None:
        current = len(self._topologies)
        if version is not None and version != current:
            raise ConflictError(
                [f"the topology is at version {current}, not {version}: plan again"]
            )

    def _other_loads(
        self, change: Change, counting: Callable[[Reservation], bool]
    ) -> list[LinkLoad]:
        if not change.loads:
            return []
        begin = min(load.start for load in change.loads)
        finish = max(load.end for load in change.loads)
        links = {load.link for load in change.loads}
        candidates = set().union(*(self._on_link[link] for link in links))
        candidates.discard(change.reservation.id)
        out: list[LinkLoad] = []
        for reservation_id in sorted(candidates):
            reservation = self._reservations[reservation_id]
            overlapping = [
                load
                for load in self._loads[reservation_id]
                if load.link in links and load.start < finish and load.end > begin
            ]
            # Like the SQL store: `counting` is asked only about overlapping bookings.
            if overlapping and reservation.state in BOOKED and counting(reservation):
                out.extend(overlapping)
        return out

    def _put(self, reservation: Reservation, loads: tuple[LinkLoad, ...]) -> None:
        for load in self._loads.get(reservation.id, ()):
            self._on_link[load.link].discard(reservation.id)
        self._reservations[reservation.id] = reservation
        self._loads[reservation.id] = tuple(loads)
        for load in loads:
            self._on_link[load.link].add(reservation.id)
        self._seq += 1
        self._stamps[reservation.id] = self._seq

    def _log(self, entry: AuditEntry) -> None:
        self._audit.append(replace(entry, detail=_as_json(entry.detail)))

    def write_new(
        self, items: Sequence[tuple[WriteStep, str]], *, now: int
    ) -> list[Reservation | ConflictError]:
        """See `Repository.write_new`: each step in turn, all under the lock."""
        with self._lock:
            version = len(self._topologies)
            stale = [s for s, _ in items if s.change.topology_version not in (None, version)]
            if stale:
                self._check_topology(stale[0].change.topology_version)
            return [self._write_new(step, actor, now) for step, actor in items]

    def _write_new(self, step: WriteStep, actor: str, now: int) -> Reservation | ConflictError:
        reservation = step.change.reservation
        if reservation.id in self._reservations or step.expected_version not in (None, 0):
            return ConflictError([f"reservation {reservation.id} exists already"])
        try:
            return self._write(step, now=now, actor=actor, counting=None)
        except ConflictError as refused:
            return refused

    def set_state(
        self, reservation_id: str, state: State, *, now: int, actor: str, detail: Mapping[str, Any]
    ) -> Reservation:
        """See `SqlRepository.set_state`: idempotent, lifecycle-checked, KeyError if unknown."""
        with self._lock:
            return self._set_state(StateStep(reservation_id, state, detail), now=now, actor=actor)

    def _set_state(self, step: StateStep, *, now: int, actor: str) -> Reservation:
        old = self._reservations[step.reservation_id]
        if old.state == step.state:
            return old
        problem = transition_problem(old.state, step.state, old.hold_expires_at, now)
        if problem:
            raise ConflictError([f"reservation {step.reservation_id}: {problem}"])
        new = replace(old, state=step.state, updated_at=now, version=old.version + 1)
        self._put(new, self._loads[step.reservation_id])
        entry = AuditEntry(
            now, actor, step.reservation_id, "state", old.state.value, step.state.value
        )
        self._log(replace(entry, detail=step.detail))
        return new

    def apply(
        self,
        steps: Sequence[Step],
        *,
        now: int,
        actor: str,
        counting: Callable[[Reservation], bool] | None = None,
    ) -> list[Reservation | TopologyVersion]:
        """See `Repository.apply`: all steps under the lock, undone together on failure."""
        with self._lock:
            saved = self._snapshot()
            try:
                return [self._step(step, now, actor, counting) for step in steps]
            except (ConflictError, KeyError):
                self._restore(saved)
                raise

    def _step(
        self, step: Step, now: int, actor: str, counting: Callable[[Reservation], bool] | None
    ) -> Reservation | TopologyVersion:
        if isinstance(step, WriteStep):
            return self._write(step, now=now, actor=actor, counting=counting)
        if isinstance(step, StateStep):
            return self._set_state(step, now=now, actor=actor)
        if step.expected is not None:
            self._check_topology(step.expected)
        return self._put_topology(step.data, now=now, actor=actor, detail=step.detail)

    def _snapshot(self) -> tuple[Any, ...]:
        on_link = {link: set(ids) for link, ids in self._on_link.items()}
        return (
            dict(self._reservations),
            dict(self._loads),
            on_link,
            dict(self._stamps),
            self._seq,
            len(self._audit),
            len(self._topologies),
        )

    def _restore(self, saved: tuple[Any, ...]) -> None:
        reservations, loads, on_link, stamps, seq, audit, topologies = saved
        self._reservations, self._loads, self._stamps, self._seq = reservations, loads, stamps, seq
        self._on_link = defaultdict(set, on_link)
        del self._audit[audit:]
        del self._topologies[topologies:]

    def get(self, reservation_id: str) -> Reservation | None:
        with self._lock:
            return self._reservations.get(reservation_id)

    def keyed(self, owner: str, key: str) -> Reservation | None:
        with self._lock:
            return next(
                (
                    r
                    for r in self._reservations.values()
                    if r.owner == owner and r.idempotency_key == key
                ),
                None,
            )

    def find(self, filters: Filters) -> list[Reservation]:
        """Matches ordered by start then id, at most `filters.limit` of them."""
        with self._lock:
            found = [r for r in self._reservations.values() if _matches(r, filters)]
        found.sort(key=lambda r: (r.start, r.id))
        return found[: filters.limit]

    def booked(self) -> list[Reservation]:
        """Every reservation whose stored state is held, reserved or active, by start then id."""
        with self._lock:
            found = [r for r in self._reservations.values() if r.state in BOOKED]
        return sorted(found, key=lambda r: (r.start, r.id))

    def due(self, now: int) -> list[Reservation]:
        """See `Repository.due`; by start then id."""
        booked = self.booked()
        return [
            r
            for r in booked
            if state_at(r.state, r.start, r.end, now, r.hold_expires_at) != r.state
        ]

    def changes_since(self, cursor: int) -> tuple[list[Reservation], int]:
        with self._lock:
            stamped = sorted((s, i) for i, s in self._stamps.items() if s > cursor)
            found = [self._reservations[i] for _, i in stamped]
        return found, stamped[-1][0] if stamped else cursor

    def cursor(self) -> int:
        """The newest cursor value: `changes_since(0)`'s cursor without the rows."""
        with self._lock:
            return self._seq

    def audit(self, reservation_id: str | None = None, limit: int = 1000) -> list[AuditEntry]:
        """The newest `limit` entries (of one reservation, or all), oldest first."""
        with self._lock:
            entries = [
                e
                for e in self._audit
                if reservation_id is None or e.reservation_id == reservation_id
            ]
        return entries[-limit:] if limit > 0 else []

    def link_loads(self) -> list[tuple[str, LinkLoad]]:
        """Every stored load with its reservation id, whatever the state (for checkers)."""
        with self._lock:
            return [(rid, load) for rid, loads in self._loads.items() for load in loads]

    # -- topology ----------------------------------------------------------
    def topology(self) -> TopologyVersion | None:
        with self._lock:
            return self._topologies[-1] if self._topologies else None

    def topology_versions(self) -> list[TopologyVersion]:
        with self._lock:
            return list(self._topologies)

    def topology_version(self) -> int:
        with self._lock:
            return len(self._topologies)

    def put_topology(self, data: Mapping[str, Any], *, now: int, actor: str) -> TopologyVersion:
        with self._lock:
            return self._put_topology(data, now=now, actor=actor)

    def put_first_topology(
        self, data: Mapping[str, Any], *, now: int, actor: str
    ) -> TopologyVersion:
        """See `Repository.put_first_topology`."""
        with self._lock:
            if self._topologies:
                return self._topologies[-1]
            return self._put_topology(data, now=now, actor=actor)

    def _put_topology(
        self,
        data: Mapping[str, Any],
        *,
        now: int,
        actor: str,
        detail: Mapping[str, Any] | None = None,
    ) -> TopologyVersion:
        version = TopologyVersion(len(self._topologies) + 1, _as_json(data), now, actor)
        self._topologies.append(version)
        noted = {**(detail or {}), "version": version.version}
        self._log(AuditEntry(now, actor, None, "topology", detail=noted))
        return version

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
        """See `Repository.add_token`."""
        with self._lock:
            if token_hash in self._tokens:
                raise ConflictError(["this token exists already"])
            known = self._users.get(user.name)
            # A new token changes the user's role, never their settings.
            self._users[user.name] = replace(user, tz=None if known is None else known.tz)
            info = TokenInfo(token_id(token_hash), user.name, user.role, now, expires_at)
            self._tokens[token_hash] = info
            self._log(token_entry("token", info, now, actor or user.name))
            return info

    def token(self, token_hash: str) -> TokenInfo | None:
        with self._lock:
            found = self._tokens.get(token_hash)
            return None if found is None else self._with_role(found)

    def tokens(self, user: str | None = None) -> list[TokenInfo]:
        """See `Repository.tokens`."""
        with self._lock:
            found = [self._with_role(t) for t in self._tokens.values() if user in (None, t.user)]
        return sorted(found, key=lambda t: (t.created_at, t.id))

    def revoke_tokens(
        self, *, now: int, actor: str, prefix: str = "", user: str | None = None
    ) -> list[TokenInfo]:
        """See `Repository.revoke_tokens`."""
        with self._lock:
            revoked: list[TokenInfo] = []
            for token_hash, info in sorted(self._tokens.items()):
                wanted = token_hash.startswith(prefix) and user in (None, info.user)
                if wanted and info.revoked_at is None:
                    info = replace(info, revoked_at=now)
                    self._tokens[token_hash] = info
                    self._log(token_entry("token-revoked", info, now, actor))
                    revoked.append(self._with_role(info))
            return revoked

    def set_user_tz(self, user: str, tz: str | None) -> None:
        """See `Repository.set_user_tz`."""
        with self._lock:
            if user not in self._users:
                raise NotFoundError(f"no user {user!r}")
            self._users[user] = replace(self._users[user], tz=tz)

    def _with_role(self, info: TokenInfo) -> TokenInfo:
        known = self._users[info.user]
        return replace(info, role=known.role, tz=known.tz)


def _counting_at(now: int) -> Callable[[Reservation], bool]:
    return lambda r: counts_against_capacity(r.state, r.end, now, r.hold_expires_at)


def _matches(reservation: Reservation, filters: Filters) -> bool:
    if filters.owner is not None and reservation.owner != filters.owner:
        return False
    if filters.states is not None:
        r = reservation
        state = (
            r.state
            if filters.at is None
            else state_at(r.state, r.start, r.end, filters.at, r.hold_expires_at)
        )
        if state not in filters.states:
            return False
    if filters.start is not None and reservation.end <= filters.start:
        return False
    if filters.after is not None and (reservation.start, reservation.id) <= filters.after:
        return False
    return filters.end is None or reservation.start < filters.end
