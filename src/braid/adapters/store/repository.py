"""`SqlRepository`: the service's `Repository` on SQLite or PostgreSQL.

Locking (why no link is ever overbooked by two writers at once):

- PostgreSQL, READ COMMITTED: a write locks the rows of `links` it loads
  (`SELECT ... ORDER BY id FOR UPDATE`, sorted so that writers never wait on
  each other in a cycle) and holds them until commit; the next writer on any
  of those links waits, then reads loads that include the first one's.
- SQLite: writes begin with `BEGIN IMMEDIATE`, which takes the database's
  single write lock before the first read; other writers, threads or
  processes, wait up to the busy timeout.

The change cursor is `state.seq`, bumped as each write's last statement; its
row lock lasts until commit, so cursor values are committed in order and
`changes_since` cannot skip a change that commits late.

On PostgreSQL each bump is also announced to listening replicas when it
commits (see `notify`); `change_feed` gives the listener, which this
repository tells of its own writes' cursor values after each commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update
from sqlalchemy.exc import DBAPIError

from braid.adapters.store import batch, reads, tokens, writes
from braid.adapters.store.codec import (
    LINKS,
    RESERVATIONS,
    STATE,
    TOKENS,
    TOPOLOGY,
    counts_until,
)
from braid.adapters.store.engine import writer
from braid.adapters.store.notify import (
    Connect,
    CursorListener,
    engine_connector,
    supports_notifications,
)
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
)
from braid.core.planning.lifecycle import BOOKED, State, transition_problem

# Cursor values a transaction took -> the (id, version) of what it wrote under each.
_Written = dict[int, set[tuple[str, int]]]


class SqlRepository:
    """A `braid.app.ports.Repository` over a migrated database (see `open_repository`)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._writer = writer(engine)
        # Reads that take several statements see one snapshot on PostgreSQL
        # too; SQLite's deferred BEGIN in WAL mode already gives one.
        self._reader = (
            engine.execution_options(isolation_level="REPEATABLE READ")
            if engine.dialect.name == "postgresql"
            else engine
        )
        # Single-statement reads need no transaction: on PostgreSQL that
        # saves the BEGIN and COMMIT round trips.
        self._single = (
            engine.execution_options(isolation_level="AUTOCOMMIT")
            if engine.dialect.name == "postgresql"
            else engine
        )
        self._feed: CursorListener | None = None

    def change_feed(self, connect: Connect | None = None) -> CursorListener | None:
        """The listener that hears every committed cursor value (PostgreSQL), else None.

        One per repository, made on the first call (with `connect`, when
        given, to open its connections), not started: the service starts
        and stops it.
        """
        if self._feed is None and supports_notifications(self.engine):
            self._feed = CursorListener(connect or engine_connector(self.engine))
        return self._feed

    @contextmanager
    def _transaction(self) -> Iterator[tuple[Connection, _Written]]:
        """A write transaction; once it commits, the feed learns the cursor values it took."""
        written: _Written = {}
        with collisions_as_conflicts(), self._writer.begin() as connection:
            yield connection, written
        if self._feed is not None and written:
            self._feed.wrote(written)

    def close(self) -> None:
        """Stop the change listener and close pooled connections (unusable afterwards)."""
        if self._feed is not None:
            self._feed.stop()
        self.engine.dispose()

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
        """See `Repository.write`; `expected_version=0` means "must not exist yet".

        A change whose `topology_version` differs from the stored one (in
        practice: is older) raises ConflictError; None skips that check.

        `counting` is called once per other reservation whose stored state is
        held, reserved or active and that loads a locked link in the window,
        with a record built from the reservation row alone: its allocations,
        request and plan are empty. Without it the lifecycle's rule at `now`
        decides inside the query (no record is built per row: the fast path).
        """
        step = WriteStep(change, validate, action, expected_version)
        with self._transaction() as (connection, written):
            return self._write(connection, written, step, now, actor, counting)

    def _write(
        self,
        connection: Connection,
        written: _Written,
        step: WriteStep,
        now: int,
        actor: str,
        counting: Callable[[Reservation], bool] | None,
    ) -> Reservation:
        change = step.change
        reservation = change.reservation
        writes.lock_links(connection, (load.link for load in change.loads))
        old = writes.current(connection, reservation.id)
        writes.check_version(old, step.expected_version, reservation.id)
        problems = step.validate(writes.other_loads(connection, change, counting, now))
        if problems:
            raise ConflictError(problems)  # leaving the transaction rolls back
        stored = writes.store(connection, change, old, now)
        entry = AuditEntry(
            at=now,
            actor=actor,
            reservation_id=reservation.id,
            action=step.action,
            from_state=None if old is None else str(old.state),
            to_state=reservation.state.value,
            detail=change.audit_detail(stored.version),
        )
        writes.log(connection, entry)
        seq = writes.advance_cursor(connection, reservation.id, change.topology_version)
        written.setdefault(seq, set()).add((stored.id, stored.version))
        return stored

    def write_new(
        self, items: Sequence[tuple[WriteStep, str]], *, now: int
    ) -> list[Reservation | ConflictError]:
        """See `Repository.write_new`: one transaction, link locks taken once for all."""
        with self._transaction() as (connection, written):
            outcomes, seq = batch.write_batch(connection, items, now)
            if seq is not None and self._feed is not None:
                # The batch took one cursor value for all its stored rows.
                written[seq] = {(o.id, o.version) for o in outcomes if isinstance(o, Reservation)}
            return outcomes

    def set_state(
        self, reservation_id: str, state: State, *, now: int, actor: str, detail: Mapping[str, Any]
    ) -> Reservation:
        """See `Repository.set_state`; checked against the lifecycle under the row lock.

        Asking for the state it already has changes nothing (commit and abort
        are idempotent). A step the lifecycle forbids, or confirming a hold
        at or after `hold_expires_at`, raises ConflictError. An unknown id
        raises KeyError.
        """
        step = StateStep(reservation_id, state, detail)
        with self._transaction() as (connection, written):
            return self._set_state(connection, written, step, now, actor)

    def _set_state(
        self, connection: Connection, written: _Written, step: StateStep, now: int, actor: str
    ) -> Reservation:
        reservation_id, state = step.reservation_id, step.state
        old = writes.current(connection, reservation_id)
        if old is None:
            raise KeyError(reservation_id)
        if old.state == state.value:
            return self._reread(connection, reservation_id)
        problem = transition_problem(State(old.state), state, old.hold_expires_at, now)
        if problem:
            raise ConflictError([f"reservation {reservation_id}: {problem}"])
        connection.execute(
            update(RESERVATIONS)
            .where(RESERVATIONS.c.id == reservation_id)
            .values(state=state.value, updated_at=now, version=RESERVATIONS.c.version + 1)
        )
        until = counts_until(state, int(old.end), old.hold_expires_at)
        writes.set_counts_until(connection, reservation_id, until)
        entry = AuditEntry(now, actor, reservation_id, "state", old.state, state.value, step.detail)
        writes.log(connection, entry)
        seq = writes.advance_cursor(connection, reservation_id)
        stored = self._reread(connection, reservation_id)
        written.setdefault(seq, set()).add((stored.id, stored.version))
        return stored

    def apply(
        self,
        steps: Sequence[Step],
        *,
        now: int,
        actor: str,
        counting: Callable[[Reservation], bool] | None = None,
    ) -> list[Reservation | TopologyVersion]:
        """See `Repository.apply`: one transaction; every link any step loads is locked first.

        Taking all link locks up front, in sorted order, keeps the order
        every writer uses, so a batch cannot deadlock with single writes.
        """
        links = {
            load.link for step in steps if isinstance(step, WriteStep) for load in step.change.loads
        }
        with self._transaction() as (connection, written):
            writes.lock_links(connection, links)
            return [self._step(connection, written, step, now, actor, counting) for step in steps]

    def _step(
        self,
        connection: Connection,
        written: _Written,
        step: Step,
        now: int,
        actor: str,
        counting: Callable[[Reservation], bool] | None,
    ) -> Reservation | TopologyVersion:
        if isinstance(step, WriteStep):
            return self._write(connection, written, step, now, actor, counting)
        if isinstance(step, StateStep):
            return self._set_state(connection, written, step, now, actor)
        if step.expected is not None:
            writes.check_topology(writes.locked_topology_version(connection), {step.expected})
        return self._put_topology(connection, step.data, now, actor, step.detail)

    @staticmethod
    def _reread(connection: Connection, reservation_id: str) -> Reservation:
        found = reads.one(connection, reservation_id)
        if found is None:  # pragma: no cover - written in this very transaction
            raise KeyError(reservation_id)
        return found

    def get(self, reservation_id: str) -> Reservation | None:
        with self._reader.connect() as connection:
            return reads.one(connection, reservation_id)

    def keyed(self, owner: str, key: str) -> Reservation | None:
        """See `Repository.keyed`: one lookup in the unique (owner, key) index."""
        where = [RESERVATIONS.c.owner == owner, RESERVATIONS.c.idempotency_key == key]
        with self._reader.connect() as connection:
            found = reads.reservations(connection, where, limit=1)
        return found[0] if found else None

    def find(self, filters: Filters) -> list[Reservation]:
        """Matches ordered by start then id, at most `filters.limit` of them."""
        with self._reader.connect() as connection:
            return reads.reservations(connection, reads.filtered(filters), limit=filters.limit)

    def booked(self) -> list[Reservation]:
        """See `Repository.booked`; ordered by start then id, two queries in all."""
        states = sorted(s.value for s in BOOKED)
        with self._reader.connect() as connection:
            return reads.reservations(connection, [RESERVATIONS.c.state.in_(states)])

    def due(self, now: int) -> list[Reservation]:
        """See `Repository.due`; ordered by start then id; reads only those rows."""
        with self._reader.connect() as connection:
            return reads.reservations(connection, [reads.due_at(now)])

    def changes_since(self, cursor: int) -> tuple[list[Reservation], int]:
        """See `Repository.changes_since`; ordered by cursor value.

        The new cursor is the largest value returned (not the counter), since
        the counter may already count a write that is not yet visible.
        """
        with self._single.connect() as connection:
            return reads.changes(connection, cursor)

    def cursor(self) -> int:
        """The newest committed cursor value: `changes_since(0)`'s cursor without the rows."""
        with self._reader.connect() as connection:
            return int(connection.execute(select(STATE.c.seq).where(STATE.c.id == 1)).scalar_one())

    def audit(self, reservation_id: str | None = None, limit: int = 1000) -> list[AuditEntry]:
        """The newest `limit` entries (of one reservation, or all), oldest first."""
        with self._reader.connect() as connection:
            return reads.audit(connection, reservation_id, limit)

    def link_loads(self) -> list[tuple[str, LinkLoad]]:
        """Every stored load with its reservation id, whatever the state (for checkers)."""
        with self._reader.connect() as connection:
            return reads.link_loads(connection)

    # -- topology ----------------------------------------------------------
    def topology(self) -> TopologyVersion | None:
        with self._reader.connect() as connection:
            return reads.latest_topology(connection)

    def topology_version(self) -> int:
        """The newest committed topology version (0 before the first), one scalar read."""
        query = select(STATE.c.topology_version).where(STATE.c.id == 1)
        with self._single.connect() as connection:
            return int(connection.execute(query).scalar_one())

    def topology_versions(self) -> list[TopologyVersion]:
        """Every stored version, oldest first (a few rows: one per topology change)."""
        with self._reader.connect() as connection:
            return reads.topology_versions(connection)

    def put_topology(self, data: Mapping[str, Any], *, now: int, actor: str) -> TopologyVersion:
        """Store `data` as the next version and give each of its links a lock row.

        Rows of links that later versions drop are kept: reservations made
        on them still lock them.
        """
        with self._writer.begin() as connection:
            return self._put_topology(connection, data, now, actor)

    def put_first_topology(
        self, data: Mapping[str, Any], *, now: int, actor: str
    ) -> TopologyVersion:
        """See `Repository.put_first_topology`.

        The `state` row's lock (PostgreSQL: FOR UPDATE; SQLite: the write lock
        of BEGIN IMMEDIATE) makes a second starter wait, then find version 1.
        """
        with self._writer.begin() as connection:
            if writes.locked_topology_version(connection) == 0:
                return self._put_topology(connection, data, now, actor)
            found = reads.latest_topology(connection)
        assert found is not None, "the state row counts a topology that is not there"
        return found

    def _put_topology(
        self,
        connection: Connection,
        data: Mapping[str, Any],
        now: int,
        actor: str,
        detail: Mapping[str, Any] | None = None,
    ) -> TopologyVersion:
        link_ids = sorted({str(link["id"]) for link in data.get("links", ())})
        writes.insert_missing(connection, LINKS, [{"id": link} for link in link_ids])
        version = writes.next_topology_version(connection)
        row = {"version": version, "data": dict(data), "created_at": now, "actor": actor}
        connection.execute(insert(TOPOLOGY).values(**row))
        noted = {**(detail or {}), "version": version}
        entry = AuditEntry(now, actor, None, "topology", detail=noted)
        writes.log(connection, entry)
        return TopologyVersion(version, reads_back(data), now, actor)

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
        """See `Repository.add_token`; the user is created, or given `user.role`."""
        with self._writer.begin() as connection:
            actor = actor or user.name
            return tokens.add(
                connection, token_hash, user, now=now, expires_at=expires_at, actor=actor
            )

    def token(self, token_hash: str) -> TokenInfo | None:
        with self._single.connect() as connection:
            found = tokens.found(connection, [TOKENS.c.hash == token_hash])
        return found[0][1] if found else None

    def tokens(self, user: str | None = None) -> list[TokenInfo]:
        """See `Repository.tokens`."""
        where = [] if user is None else [TOKENS.c.user_name == user]
        with self._single.connect() as connection:
            return [info for _, info in tokens.found(connection, where)]

    def revoke_tokens(
        self, *, now: int, actor: str, prefix: str = "", user: str | None = None
    ) -> list[TokenInfo]:
        """See `Repository.revoke_tokens`."""
        with self._writer.begin() as connection:
            return tokens.revoke(connection, now=now, actor=actor, prefix=prefix, user=user)

    def set_user_tz(self, user: str, tz: str | None) -> None:
        """See `Repository.set_user_tz`."""
        with self._writer.begin() as connection:
            tokens.set_tz(connection, user, tz)


def reads_back(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` as the JSON column gives it back (tuples become lists, keys strings)."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(data)))
    return loaded


# PostgreSQL's deadlock and serialization failures: the transaction was rolled
# back because of another writer, so retrying is right, as after a ConflictError.
_COLLISIONS = frozenset({"40P01", "40001"})


@contextmanager
def collisions_as_conflicts() -> Iterator[None]:
    try:
        yield
    except DBAPIError as error:
        code = getattr(error.orig, "sqlstate", None)
        if code in _COLLISIONS:
            raise ConflictError([f"collided with another writer ({code}); try again"]) from error
        raise
