"""Several new reservations in one write transaction (group commit).

Each one is still checked on its own, in order, against every counting load
on its links in the store plus the loads of those before it in the batch;
the store's link locks are taken once for all of them, in sorted order like
every other writer, and the cursor is bumped once for all. What one costs
(locks, round trips, the commit) is then shared by every booking in the batch.

On PostgreSQL the locks take one statement, each step's loads one, and all
the rows one (see `bulk`); SQLite, whose write lock was taken at BEGIN,
reads each step's loads and inserts each table's rows through SQLAlchemy.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Final

from sqlalchemy import Connection, insert
from sqlalchemy.exc import IntegrityError

from braid.adapters.store import bulk, writes
from braid.adapters.store.codec import (
    AUDIT,
    PATHS,
    RESERVATIONS,
    audit_values,
    load_values,
    path_values,
    reservation_values,
)
from braid.app.ports import ConflictError, WriteStep
from braid.app.records import AuditEntry, LinkLoad, Reservation

Outcome = Reservation | ConflictError

_INSERTS: Final = {table.name: insert(table) for table in (RESERVATIONS, PATHS, AUDIT)}


def write_new(
    connection: Connection, items: Sequence[tuple[WriteStep, str]], now: int
) -> list[Outcome]:
    """Insert each (step, actor) that fits; a ConflictError in its place for those that do not.

    The caller's transaction commits whatever this returns as stored; an
    exception (a clash on the topology version, a duplicate id) leaves
    nothing written, as for a single write.
    """
    return write_batch(connection, items, now)[0]


def write_batch(
    connection: Connection, items: Sequence[tuple[WriteStep, str]], now: int
) -> tuple[list[Outcome], int | None]:
    """`write_new`, and the cursor value the stored ones carry (None if none is stored)."""
    steps = [step for step, _ in items]
    # Ids are random (48 bits): no query looks for them first. One in use
    # fails the insert, and with it the whole batch, as a ConflictError.
    known: set[str] = set()
    on_link = _locked_counting_loads(connection, steps, now)
    outcomes: list[Outcome] = []
    for step in steps:
        reservation = step.change.reservation
        if reservation.id in known or step.expected_version not in (None, 0):
            outcomes.append(ConflictError([f"reservation {reservation.id} exists already"]))
            continue
        problems = step.validate(_relevant(on_link, step.change.loads))
        if problems:
            outcomes.append(ConflictError(problems))
            continue
        known.add(reservation.id)
        for load in step.change.loads:
            on_link[load.link].append(load)  # the next ones in the batch see it
        outcomes.append(_as_stored(reservation, now))
    accepted = [(s, a) for (s, a), o in zip(items, outcomes, strict=True) if _stored(o)]
    return outcomes, _insert(connection, accepted, now) if accepted else None


def _stored(outcome: Outcome) -> bool:
    return isinstance(outcome, Reservation)


def _locked_counting_loads(
    connection: Connection, steps: Sequence[WriteStep], now: int
) -> defaultdict[str, list[LinkLoad]]:
    """Lock every step's links, then read the counting loads on them in its window, by link.

    Each step reads its own window (a union window over a whole batch would
    read most of the week's loads); a row two steps both see counts once.
    """
    links = sorted({load.link for s in steps for load in s.change.loads})
    if not writes.is_postgres(connection):
        writes.lock_links(connection, links)
        return _by_link(_counting_rows(connection, steps, now))
    if bulk.lock(connection, links) < len(links):  # a link without its row yet
        writes.lock_links(connection, links)
    rows = bulk.read(connection, [_window(s) for s in steps if s.change.loads], now)
    return _by_link({row[0]: row for row in rows}.values())


def _counting_rows(connection: Connection, steps: Sequence[WriteStep], now: int) -> list[bulk.Row]:
    rows: dict[int, bulk.Row] = {}
    for step in steps:
        if step.change.loads:
            reservation_id = step.change.reservation.id
            found = writes.counting_rows(connection, step.change.loads, reservation_id, now)
            rows.update((row[0], row) for row in found)
    return list(rows.values())


def _by_link(rows: Iterable[bulk.Row]) -> defaultdict[str, list[LinkLoad]]:
    """(id, link, forward, start, end, bandwidth) rows as loads, by link."""
    on_link: defaultdict[str, list[LinkLoad]] = defaultdict(list)
    for _, link, forward, start, end, bandwidth in rows:
        on_link[link].append(LinkLoad(link, forward, start, end, bandwidth))
    return on_link


def _window(step: WriteStep) -> bulk.Window:
    loads = step.change.loads
    begin = min(load.start for load in loads)
    finish = max(load.end for load in loads)
    return sorted({load.link for load in loads}), begin, finish, step.change.reservation.id


def _relevant(on_link: dict[str, list[LinkLoad]], mine: Sequence[LinkLoad]) -> list[LinkLoad]:
    """What `Repository.write` would give `validate`: loads on my links overlapping my window."""
    if not mine:
        return []
    begin = min(load.start for load in mine)
    finish = max(load.end for load in mine)
    links = sorted({load.link for load in mine})
    return [
        load
        for link in links
        for load in on_link.get(link, ())
        if load.start < finish and load.end > begin
    ]


def _as_stored(reservation: Reservation, now: int) -> Reservation:
    return replace(
        reservation,
        request=writes.as_stored(reservation.request),
        plan=writes.as_stored(reservation.plan),
        version=1,
        created_at=reservation.created_at or now,
        updated_at=now,
    )


def _insert(connection: Connection, accepted: list[tuple[WriteStep, str]], now: int) -> int:
    """Write the accepted steps' rows under one new cursor value, which it returns."""
    rows: list[dict[str, Any]] = []
    paths: list[dict[str, Any]] = []
    loads: list[dict[str, Any]] = []
    audit: list[dict[str, Any]] = []
    for step, actor in accepted:
        r = step.change.reservation
        created = r.created_at or now
        rows.append(reservation_values(r, version=1, created_at=created, updated_at=now))
        paths += path_values(r)
        loads += load_values(r, step.change.loads)
        detail = step.change.audit_detail(1)
        entry = AuditEntry(now, actor, r.id, step.action, None, r.state.value, detail)
        audit.append(audit_values(entry))
    versions = {s.change.topology_version for s, _ in accepted}
    expected = {v for v in versions if v is not None}
    if writes.is_postgres(connection):
        return _insert_in_one_statement(connection, expected, (rows, paths, loads, audit))
    return _insert_rows(connection, expected, (rows, paths, loads, audit))


Tables = tuple[
    list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]
]


def _insert_in_one_statement(connection: Connection, expected: set[int], tables: Tables) -> int:
    """PostgreSQL: the cursor bump and every row in one statement (see `bulk`)."""
    try:
        seq, current = bulk.write(connection, *tables)
    except IntegrityError as error:
        raise ConflictError(["a reservation id or token of this batch is in use"]) from error
    writes.check_topology(current, expected)  # raising rolls the whole batch back
    return seq


def _insert_rows(connection: Connection, expected: set[int], tables: Tables) -> int:
    """SQLite: one executemany per table, after taking the cursor."""
    rows, paths, loads, audit = tables
    # The cursor is taken first so the rows carry it from the start; its lock
    # is held until commit either way.
    seq = writes.bump_cursor(connection, expected)
    try:
        connection.execute(_INSERTS["reservations"], [{**row, "seq": seq} for row in rows])
    except IntegrityError as error:
        raise ConflictError(["a reservation id or token of this batch is in use"]) from error
    if paths:
        connection.execute(_INSERTS["reservation_paths"], paths)
    writes.insert_loads(connection, loads)
    connection.execute(_INSERTS["audit_log"], audit)
    return seq
