"""The steps of a write transaction, in the order that keeps writers from deadlocking.

Lock order on PostgreSQL: link rows (sorted by id), then the reservation's own
row, then the `state` row last. Every writer follows it, so no two writers
can each hold a lock the other waits for. On SQLite the whole database is
locked at `BEGIN IMMEDIATE` and these row locks are not needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    ScalarSelect,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from braid.adapters.store import bulk
from braid.adapters.store.codec import (
    AUDIT,
    LINKS,
    LOADS,
    PATHS,
    RESERVATIONS,
    SCALARS,
    STATE,
    audit_values,
    load_values,
    path_values,
    reservation_values,
    to_reservation,
)
from braid.app.ports import Change, ConflictError
from braid.app.records import AuditEntry, LinkLoad, Reservation
from braid.core.planning.lifecycle import BOOKED

_BOOKED_VALUES: Final = sorted(s.value for s in BOOKED)


def is_postgres(connection: Connection) -> bool:
    return connection.dialect.name == "postgresql"


def insert_missing(connection: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert `rows`, skipping those whose key exists (both dialects say ON CONFLICT)."""
    if not rows:
        return
    dialect = postgresql if is_postgres(connection) else sqlite
    connection.execute(dialect.insert(table).on_conflict_do_nothing(), list(rows))


# Hot statements are built once: building one costs about as much CPU as
# running it (SQLAlchemy caches the compiled form, not the construct).
_LOCK_LINKS: Final = (
    select(LINKS.c.id)
    .where(LINKS.c.id.in_(bindparam("links", expanding=True)))
    .order_by(LINKS.c.id)
    .with_for_update()
)


def _longest_on(links: ColumnElement[bool]) -> ScalarSelect[Any]:
    """The longest load stored on the links `links` selects (0 if none)."""
    return select(func.coalesce(func.max(LINKS.c.longest_load), 0)).where(links).scalar_subquery()


def _overlap_bounds(links: Any, begin: Any, finish: Any) -> list[ColumnElement[bool]]:
    """Loads on `links` overlapping [begin, finish), read as a bounded range of the index.

    Every load on a link lasts at most the link's `longest_load`, so one
    that ends after `begin` starts after `begin - longest`: the range scan on
    (link_id, start) stops there instead of reading the link's whole history.
    """
    return [
        LOADS.c.link_id.in_(links),
        LOADS.c.start < finish,
        LOADS.c.start >= begin - _longest_on(LINKS.c.id.in_(links)),
        LOADS.c.end > begin,
    ]


COUNTING_LOADS: Final = select(
    LOADS.c.id, LOADS.c.link_id, LOADS.c.forward, LOADS.c.start, LOADS.c.end, LOADS.c.bandwidth
).where(
    *_overlap_bounds(bindparam("links", expanding=True), bindparam("begin"), bindparam("finish")),
    LOADS.c.reservation_id != bindparam("mine"),
    LOADS.c.counts_until > bindparam("now"),
)
_RAISE_LONGEST: Final = (
    update(LINKS)
    .where(LINKS.c.id == bindparam("link"), LINKS.c.longest_load < bindparam("longest"))
    .values(longest_load=bindparam("longest"))
)
_BUMP: Final = (
    update(STATE)
    .where(STATE.c.id == 1)
    .values(seq=STATE.c.seq + 1)
    .returning(STATE.c.seq, STATE.c.topology_version)
)


def lock_links(connection: Connection, link_ids: Iterable[str]) -> None:
    """Hold every link's row lock until commit, creating rows for unknown link ids.

    A link without a row could not be locked, so a load on it would escape
    the check; inserting first makes every loaded link lockable.
    """
    ordered = sorted(set(link_ids))
    if not ordered or not is_postgres(connection):
        return
    if len(connection.execute(_LOCK_LINKS, {"links": ordered}).all()) == len(ordered):
        return  # the usual case: every link has its row since its topology was stored
    insert_missing(connection, LINKS, [{"id": link} for link in ordered])
    connection.execute(_LOCK_LINKS, {"links": ordered}).all()


def current(connection: Connection, reservation_id: str) -> Row[Any] | None:
    """The stored reservation's scalar columns, locked until commit on PostgreSQL."""
    query = select(*SCALARS).where(RESERVATIONS.c.id == reservation_id)
    if is_postgres(connection):
        query = query.with_for_update()
    return connection.execute(query).first()


def check_version(old: Row[Any] | None, expected: int | None, reservation_id: str) -> None:
    """`expected` 0 means "must not exist yet"; otherwise it must equal the stored version."""
    if expected is None:
        return
    stored = 0 if old is None else int(old.version)
    if stored != expected:
        raise ConflictError(
            [f"reservation {reservation_id}: version is {stored}, expected {expected}"]
        )


def other_loads(
    connection: Connection,
    change: Change,
    counting: Callable[[Reservation], bool] | None,
    now: int,
) -> list[LinkLoad]:
    """Loads of other counting reservations on the change's links, overlapping its window.

    Only stored states that can hold bandwidth (held, reserved, active) are
    read; `counting` then decides for each of those, e.g. by the clock. Without
    `counting`, the lifecycle's own rule at `now` decides, inside the query.
    """
    if not change.loads:
        return []
    if counting is None:
        return _loads_counting_at(connection, change, now)
    query = (
        select(*SCALARS, *_load_columns())
        .select_from(LOADS.join(RESERVATIONS, LOADS.c.reservation_id == RESERVATIONS.c.id))
        .where(*_overlapping(change), RESERVATIONS.c.state.in_(_BOOKED_VALUES))
    )
    verdicts: dict[str, bool] = {}
    loads: list[LinkLoad] = []
    for row in connection.execute(query):
        counts = verdicts.get(row.id)
        if counts is None:
            # Built from scalar columns only: no allocations, request or plan.
            counts = verdicts[row.id] = counting(to_reservation(row))
        if counts:
            loads.append(
                LinkLoad(row.load_link, row.load_forward, row.load_start, row.load_end, row.load_bw)
            )
    return loads


def _loads_counting_at(connection: Connection, change: Change, now: int) -> list[LinkLoad]:
    """`other_loads` by the lifecycle's rule at `now`, from the loads table alone.

    Each load carries `counts_until` (kept in step with its reservation's
    state), so no reservation row is joined and no record is built per row.
    """
    return list(counting_loads(connection, change.loads, change.reservation.id, now).values())


def counting_loads(
    connection: Connection, mine: Sequence[LinkLoad], reservation_id: str, now: int
) -> dict[int, LinkLoad]:
    """Loads of others counting at `now` on `mine`'s links in its window, by row id."""
    rows = counting_rows(connection, mine, reservation_id, now)
    return {row[0]: LinkLoad(*row[1:]) for row in rows}


def counting_rows(
    connection: Connection, mine: Sequence[LinkLoad], reservation_id: str, now: int
) -> list[tuple[Any, ...]]:
    """`counting_loads` as (id, link, forward, start, end, bandwidth) tuples."""
    begin = min(load.start for load in mine)
    finish = max(load.end for load in mine)
    links = sorted({load.link for load in mine})
    if is_postgres(connection):
        return bulk.read(connection, [(links, begin, finish, reservation_id)], now)
    values = {"links": links, "begin": begin, "finish": finish, "mine": reservation_id, "now": now}
    return [tuple(row) for row in connection.execute(COUNTING_LOADS, values).all()]


def set_counts_until(connection: Connection, reservation_id: str, until: int) -> None:
    """After a state change: from when the reservation's loads stop counting."""
    connection.execute(
        update(LOADS).where(LOADS.c.reservation_id == reservation_id).values(counts_until=until)
    )


def _overlapping(change: Change) -> list[ColumnElement[bool]]:
    """Loads of other reservations on the change's links that overlap its window."""
    begin = min(load.start for load in change.loads)
    finish = max(load.end for load in change.loads)
    links = sorted({load.link for load in change.loads})
    return [
        *_overlap_bounds(links, begin, finish),
        LOADS.c.reservation_id != change.reservation.id,
    ]


def insert_loads(connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert load rows and raise their links' `longest_load` to cover them.

    Every link has its row by then (`lock_links`, or the topology's links),
    and the caller holds its lock (or SQLite's database lock), so no other
    writer reads the bound between the two statements.
    """
    if not rows:
        return
    connection.execute(insert(LOADS), list(rows))
    longest: dict[str, int] = {}
    for row in rows:
        longest[row["link_id"]] = max(longest.get(row["link_id"], 0), row["end"] - row["start"])
    insert_missing(connection, LINKS, [{"id": link} for link in sorted(longest)])
    raised = [{"link": link, "longest": value} for link, value in sorted(longest.items())]
    connection.execute(_RAISE_LONGEST, raised)


def _load_columns() -> tuple[Any, ...]:
    return (
        LOADS.c.link_id.label("load_link"),
        LOADS.c.forward.label("load_forward"),
        LOADS.c.start.label("load_start"),
        LOADS.c.end.label("load_end"),
        LOADS.c.bandwidth.label("load_bw"),
    )


def store(connection: Connection, change: Change, old: Row[Any] | None, now: int) -> Reservation:
    """Write the reservation, its paths and loads (replacing old rows); returns it as stored.

    The token's unique constraint refuses a token another reservation has
    (ConflictError), so no query looks for one first.
    """
    reservation = change.reservation
    if old is None:
        version = 1
        created_at = reservation.created_at or now
    else:
        version = int(old.version) + 1
        created_at = int(old.created_at)
    values = reservation_values(reservation, version=version, created_at=created_at, updated_at=now)
    try:
        if old is None:
            connection.execute(insert(RESERVATIONS).values(**values, seq=0))
        else:
            connection.execute(delete(PATHS).where(PATHS.c.reservation_id == reservation.id))
            connection.execute(delete(LOADS).where(LOADS.c.reservation_id == reservation.id))
            connection.execute(
                update(RESERVATIONS).where(RESERVATIONS.c.id == reservation.id).values(**values)
            )
    except IntegrityError as error:
        # The same id written meanwhile by another writer, or a token in use.
        raise ConflictError([f"reservation {reservation.id}: token or id in use"]) from error
    paths = path_values(reservation)
    if paths:
        connection.execute(insert(PATHS), paths)
    insert_loads(connection, load_values(reservation, change.loads))
    return replace(
        reservation,
        request=as_stored(values["request"]),
        plan=as_stored(values["plan"]),
        version=version,
        created_at=created_at,
        updated_at=now,
    )


def as_stored(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` as a JSON column gives it back (tuples become lists, keys strings)."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(data)))
    return loaded


def log(connection: Connection, entry: AuditEntry) -> None:
    connection.execute(insert(AUDIT).values(**audit_values(entry)))


def advance_cursor(
    connection: Connection, reservation_id: str, topology_version: int | None = None
) -> int:
    """Take the next cursor value (the last lock a writer takes) and stamp it on the row.

    Under that same lock, refuse the change if it was validated against a
    topology version other than the current one.
    """
    versions = set() if topology_version is None else {topology_version}
    seq = bump_cursor(connection, versions)
    connection.execute(
        update(RESERVATIONS).where(RESERVATIONS.c.id == reservation_id).values(seq=seq)
    )
    return seq


def bump_cursor(connection: Connection, topology_versions: set[int]) -> int:
    """The next cursor value, taken under the `state` row lock held until commit.

    Raises ConflictError (the transaction must roll back) if any of
    `topology_versions` is not the current topology version.
    """
    seq, current = connection.execute(_BUMP).one()
    check_topology(int(current), topology_versions)
    return int(seq)


def check_topology(current: int, topology_versions: set[int]) -> None:
    """Raise ConflictError (the transaction must roll back) unless all are `current`."""
    stale = sorted(v for v in topology_versions if v != current)
    if stale:
        raise ConflictError([f"the topology is at version {current}, not {stale[0]}: plan again"])


def locked_topology_version(connection: Connection) -> int:
    """The current topology version, with the `state` row locked until commit."""
    query = select(STATE.c.topology_version).where(STATE.c.id == 1)
    if is_postgres(connection):
        query = query.with_for_update()
    return int(connection.execute(query).scalar_one())


def next_topology_version(connection: Connection) -> int:
    """Bump the topology version under the `state` row lock that writers take last."""
    bump = (
        update(STATE)
        .where(STATE.c.id == 1)
        .values(topology_version=STATE.c.topology_version + 1)
        .returning(STATE.c.topology_version)
    )
    return int(connection.execute(bump).scalar_one())
