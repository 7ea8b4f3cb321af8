"""A batch of new reservations on PostgreSQL, at the driver level, in few statements.

Through SQLAlchemy the batch ran seven statements, and psycopg ran each
`executemany` row as a statement of its own; per admission that cost more
CPU (client and server) than the checking itself. Here, with the same locks
in the same order:

1. the link row locks, in one statement;
2. the counting loads of each step, a statement of its own run after the
   locks are held, so under READ COMMITTED its snapshot includes whatever a
   writer we waited for committed. (Locking and reading in one statement
   would read the snapshot taken before the wait.);
3. one statement: the cursor bump (`state` row lock), then every row of the
   batch, reservations carrying the new cursor value, and the links'
   `longest_load` raised to cover the new loads;

then the caller's COMMIT. (psycopg's pipeline mode would save the round
trips of 1 and 2 but costs more client CPU than they do.)

New rows travel as one JSON text per table (`json_to_recordset`) and link
ids as an array literal: serialising those is cheap, where psycopg adapts a
Python list value by value. The statement texts are fixed (no expanding IN
lists), so psycopg's usual prepare-after-a-few-runs applies to every one.
Driver errors are raised as SQLAlchemy's, as if SQLAlchemy had run the
statement.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

import psycopg
from sqlalchemy import Connection, Table
from sqlalchemy.exc import DBAPIError

from braid.adapters.store.codec import AUDIT, LOADS, PATHS, RESERVATIONS

Row = tuple[Any, ...]
# What one new booking checks: its links, its begin and finish, its own id.
Window = tuple[Sequence[str], int, int, str]

_LOCK: Final = "SELECT id FROM links WHERE id = ANY(%s::varchar[]) ORDER BY id FOR UPDATE"

# The shape the planner serves with one index range scan per link, bounded
# on both sides: a load lasts at most its link's `longest_load`, so one that
# ends after the window's begin starts after begin less the longest of them
# (a value the plan reads at run time, so a generic plan bounds it too).
COUNTING_LOADS: Final = """
SELECT id, link_id, forward, start, "end", bandwidth FROM link_loads
WHERE link_id = ANY(%(links)s::varchar[]) AND start < %(finish)s AND "end" > %(begin)s
  AND start >= %(begin)s - (
      SELECT COALESCE(MAX(longest_load), 0) FROM links WHERE id = ANY(%(links)s::varchar[])
  )
  AND counts_until > %(now)s AND reservation_id <> %(mine)s
"""


def text_array(values: Iterable[str]) -> str:
    """A PostgreSQL array literal of `values` (every element quoted, so any text is safe)."""
    quoted = (v.replace("\\", "\\\\").replace('"', '\\"') for v in values)
    return "{" + ",".join(f'"{v}"' for v in quoted) + "}"


def _given(table: Table) -> list[str]:
    """The columns a new row gives (not the serial key, nor the cursor, which the SQL sets)."""
    serial = {c.name for c in table.primary_key.columns if c.autoincrement is True}
    return [c.name for c in table.c if c.name not in serial and c.name != "seq"]


def _insert_sql(table: Table) -> str:
    """Insert the rows of one JSON array of objects (keys: the column names)."""
    given = _given(table)
    names = ", ".join(f'"{name}"' for name in given)
    record = ", ".join(f'"{name}" {table.c[name].type.compile()}' for name in given)
    source = f"json_to_recordset(%s::json) AS u({record})"
    if "seq" in table.c:  # the new cursor value, from the UPDATE of `state`
        into = f'{table.name} ({names}, "seq")'
        return f"INSERT INTO {into} SELECT {names}, bumped.seq FROM bumped, {source}"
    return f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {source}"


_WRITE: Final = f"""
WITH bumped AS (
    UPDATE state SET seq = seq + 1 WHERE id = 1 RETURNING seq, topology_version
), new_reservations AS (
    {_insert_sql(RESERVATIONS)}
), new_paths AS (
    {_insert_sql(PATHS)}
), new_loads AS (
    {_insert_sql(LOADS)} RETURNING link_id, start, "end"
), longest AS (
    UPDATE links SET longest_load = n.longest
    FROM (SELECT link_id, MAX("end" - start) AS longest FROM new_loads GROUP BY link_id) AS n
    WHERE links.id = n.link_id AND links.longest_load < n.longest
), new_audit AS (
    {_insert_sql(AUDIT)}
)
SELECT seq, topology_version FROM bumped
"""


@contextmanager
def _as_sqlalchemy_errors(connection: Connection, statement: str) -> Iterator[None]:
    try:
        yield
    except psycopg.Error as error:
        wrapped = DBAPIError.instance(
            statement, None, error, psycopg.Error, dialect=connection.dialect
        )
        raise wrapped from error


def _driver(connection: Connection) -> psycopg.Connection[Any]:
    raw = connection.connection.driver_connection
    assert isinstance(raw, psycopg.Connection), "the bulk path needs psycopg"
    return raw


def _read_params(window: Window, now: int) -> dict[str, Any]:
    links, begin, finish, mine = window
    return {"links": text_array(links), "finish": finish, "begin": begin, "now": now, "mine": mine}


def lock(connection: Connection, links: Sequence[str]) -> int:
    """Lock the rows of `links` (in sorted order) until commit; how many rows there were.

    Fewer than `links` means some link has no row yet (`writes.lock_links`
    creates and locks them).
    """
    with _as_sqlalchemy_errors(connection, _LOCK):
        return len(_driver(connection).execute(_LOCK, (text_array(links),)).fetchall())


def read(connection: Connection, windows: Sequence[Window], now: int) -> list[Row]:
    """The loads counting at `now` in each window, as (id, link, forward, start, end, bandwidth).

    A load two windows both meet comes twice.
    """
    raw = _driver(connection)
    with _as_sqlalchemy_errors(connection, COUNTING_LOADS):
        return [
            row
            for window in windows
            for row in raw.execute(COUNTING_LOADS, _read_params(window, now)).fetchall()
        ]


def write(
    connection: Connection,
    reservations: Sequence[Mapping[str, Any]],
    paths: Sequence[Mapping[str, Any]],
    loads: Sequence[Mapping[str, Any]],
    audit: Sequence[Mapping[str, Any]],
) -> tuple[int, int]:
    """Bump the cursor and insert every row; (new cursor value, current topology version).

    Rows are the codec's column -> value mappings (the JSON columns as
    their values: they are serialised with the rest, as SQLAlchemy's JSON
    type would).
    """
    params = tuple(json.dumps(rows) for rows in (reservations, paths, loads, audit))
    with _as_sqlalchemy_errors(connection, _WRITE):
        found = _driver(connection).execute(_WRITE, params).fetchone()
    assert found is not None, "the state row is missing"
    return int(found[0]), int(found[1])
