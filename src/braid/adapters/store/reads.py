"""Read queries of the SQL store: reservations with their paths, audit, topology."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    and_,
    bindparam,
    false,
    or_,
    select,
    true,
)

from braid.adapters.store.codec import (
    AUDIT,
    LOADS,
    PATHS,
    RESERVATIONS,
    TOPOLOGY,
    to_allocation,
    to_audit,
    to_reservation,
)
from braid.app.ports import Filters
from braid.app.records import AuditEntry, LinkLoad, Reservation, TopologyVersion
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.planning.lifecycle import State

# Well under every backend's limit on bound parameters (SQLite's is 32766).
_CHUNK: Final = 500


def reservations(
    connection: Connection,
    where: Sequence[ColumnElement[bool]],
    *,
    order: Sequence[ColumnElement[Any]] = (RESERVATIONS.c.start, RESERVATIONS.c.id),
    limit: int | None = None,
) -> list[Reservation]:
    """Reservations matching `where`, each with its allocations in path order."""
    query = select(RESERVATIONS).where(*where).order_by(*order)
    if limit is not None:
        query = query.limit(limit)
    rows = connection.execute(query).all()
    if limit is None:
        # One query for all paths: the same filter as a subquery.
        ids = select(RESERVATIONS.c.id).where(*where)
        allocations = _allocations(connection, [PATHS.c.reservation_id.in_(ids)])
    else:
        allocations = defaultdict(list)
        for offset in range(0, len(rows), _CHUNK):
            chunk = [row.id for row in rows[offset : offset + _CHUNK]]
            allocations.update(_allocations(connection, [PATHS.c.reservation_id.in_(chunk)]))
    return [to_reservation(row, allocations.get(row.id, ())) for row in rows]


def _allocations(
    connection: Connection, where: Sequence[ColumnElement[bool]]
) -> defaultdict[str, list[Allocation]]:
    query = select(PATHS).where(*where).order_by(PATHS.c.reservation_id, PATHS.c.index)
    out: defaultdict[str, list[Allocation]] = defaultdict(list)
    for row in connection.execute(query):
        out[row.reservation_id].append(to_allocation(row))
    return out


def changes(connection: Connection, cursor: int) -> tuple[list[Reservation], int]:
    """Reservations stamped after `cursor`, in cursor order, and the last stamp among them.

    One statement (rows joined with their paths), so it reads one snapshot
    even outside a transaction: replicas run it before every decision.
    """
    statement = _CHANGES_PG if connection.dialect.name == "postgresql" else _CHANGES
    rows = connection.execute(statement, {"cursor": cursor}).all()
    if not rows:
        return [], cursor
    found: list[Reservation] = []
    allocations: list[Allocation] = []
    for n, row in enumerate(rows):
        if row.path_bw is not None:
            path = Path(tuple(row.path_nodes), tuple(row.path_links))
            allocations.append(Allocation(path, row.path_bw))
        if n + 1 == len(rows) or rows[n + 1].id != row.id:
            found.append(to_reservation(row, allocations))
            allocations = []
    return found, int(rows[-1].seq)


_PATH_COLUMNS: Final = (
    PATHS.c.nodes.label("path_nodes"),
    PATHS.c.links.label("path_links"),
    PATHS.c.bandwidth.label("path_bw"),
)
# Built once: replicas run them whenever another replica has written.
_CHANGES: Final = (
    select(RESERVATIONS, *_PATH_COLUMNS)
    .select_from(RESERVATIONS.outerjoin(PATHS, PATHS.c.reservation_id == RESERVATIONS.c.id))
    .where(RESERVATIONS.c.seq > bindparam("cursor"))
    .order_by(RESERVATIONS.c.seq, RESERVATIONS.c.id, PATHS.c.index)
)
# PostgreSQL plans a prepared statement once for any cursor, guessing that a
# third of all reservations are past it; it then hashes the whole paths table
# to join the few rows a catch-up finds. Paths joined laterally behind
# OFFSET 0 (which keeps the planner from flattening the join) are looked up
# by index for each changed reservation instead, however large the table.
_PATHS_OF_ROW: Final = (
    select(PATHS.c.nodes, PATHS.c.links, PATHS.c.bandwidth, PATHS.c.index)
    .where(PATHS.c.reservation_id == RESERVATIONS.c.id)
    .offset(0)
    .lateral("path")
)
_CHANGES_PG: Final = (
    select(
        RESERVATIONS,
        _PATHS_OF_ROW.c.nodes.label("path_nodes"),
        _PATHS_OF_ROW.c.links.label("path_links"),
        _PATHS_OF_ROW.c.bandwidth.label("path_bw"),
    )
    .select_from(RESERVATIONS.outerjoin(_PATHS_OF_ROW, true()))
    .where(RESERVATIONS.c.seq > bindparam("cursor"))
    .order_by(RESERVATIONS.c.seq, RESERVATIONS.c.id, _PATHS_OF_ROW.c.index)
)


def link_loads(connection: Connection) -> list[tuple[str, LinkLoad]]:
    query = select(LOADS).order_by(LOADS.c.id)
    return [
        (row.reservation_id, LinkLoad(row.link_id, row.forward, row.start, row.end, row.bandwidth))
        for row in connection.execute(query)
    ]


def one(connection: Connection, reservation_id: str) -> Reservation | None:
    found = reservations(connection, [RESERVATIONS.c.id == reservation_id], limit=1)
    return found[0] if found else None


def filtered(filters: Filters) -> list[ColumnElement[bool]]:
    """SQL conditions for `filters`; the time range keeps reservations overlapping it."""
    where: list[ColumnElement[bool]] = []
    if filters.owner is not None:
        where.append(RESERVATIONS.c.owner == filters.owner)
    if filters.states is not None and filters.at is None:
        where.append(RESERVATIONS.c.state.in_(sorted(s.value for s in filters.states)))
    elif filters.states is not None and filters.at is not None:
        at = filters.at
        where.append(or_(false(), *(state_at_is(s, at) for s in sorted(filters.states))))
    if filters.start is not None:
        where.append(RESERVATIONS.c.end > filters.start)
    if filters.end is not None:
        where.append(RESERVATIONS.c.start < filters.end)
    if filters.after is not None:
        start, after_id = filters.after
        r = RESERVATIONS.c
        where.append(or_(r.start > start, and_(r.start == start, r.id > after_id)))
    return where


def state_at_is(state: State, now: int) -> ColumnElement[bool]:
    """Rows whose state at `now` is `state`: `braid.core.planning.lifecycle.state_at` in SQL."""
    stored, r = RESERVATIONS.c.state, RESERVATIONS.c
    running = stored.in_([State.RESERVED.value, State.ACTIVE.value])  # the clock moves these on
    lapsed = and_(r.hold_expires_at.is_not(None), r.hold_expires_at <= now)
    if state == State.HELD:
        return and_(stored == State.HELD.value, ~lapsed)
    if state == State.EXPIRED:
        return or_(stored == State.EXPIRED.value, and_(stored == State.HELD.value, lapsed))
    if state == State.RESERVED:
        return and_(running, r.end > now, r.start > now)
    if state == State.ACTIVE:
        return and_(running, r.end > now, r.start <= now)
    if state == State.FINISHED:
        return or_(stored == State.FINISHED.value, and_(running, r.end <= now))
    return stored == state.value


def due_at(now: int) -> ColumnElement[bool]:
    """Booked rows whose state `braid.core.planning.lifecycle.state_at` moves on at `now`."""
    state, r = RESERVATIONS.c.state, RESERVATIONS.c
    return or_(
        and_(state == State.HELD.value, r.hold_expires_at.is_not(None), r.hold_expires_at <= now),
        and_(state == State.RESERVED.value, r.start <= now),
        and_(state.in_([State.RESERVED.value, State.ACTIVE.value]), r.end <= now),
    )


def audit(connection: Connection, reservation_id: str | None, limit: int) -> list[AuditEntry]:
    """The newest `limit` entries, oldest first."""
    query = select(AUDIT).order_by(AUDIT.c.id.desc()).limit(limit)
    if reservation_id is not None:
        query = query.where(AUDIT.c.reservation_id == reservation_id)
    return [to_audit(row) for row in reversed(connection.execute(query).all())]


def topology_versions(connection: Connection) -> list[TopologyVersion]:
    rows = connection.execute(select(TOPOLOGY).order_by(TOPOLOGY.c.version)).all()
    return [TopologyVersion(r.version, r.data, r.created_at, r.actor) for r in rows]


def latest_topology(connection: Connection) -> TopologyVersion | None:
    query = select(TOPOLOGY).order_by(TOPOLOGY.c.version.desc()).limit(1)
    row: Row[Any] | None = connection.execute(query).first()
    if row is None:
        return None
    return TopologyVersion(row.version, row.data, row.created_at, row.actor)
