"""The loads check reads a bounded range and still finds every overlapping load.

`links.longest_load` lets the check start its range scan at the window's
begin less the longest load on its links. Checked here: the rows equal a
brute-force sweep of the table for random loads and windows (the longest
load crossing the begin included), and both databases' plans bound the
range on both sides, PostgreSQL's generic plan for a prepared statement too.
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import Engine, event, insert

from braid.adapters.store import bulk, writes
from braid.adapters.store.codec import LINKS, RESERVATIONS
from braid.adapters.store.engine import create_engine_from_url, upgrade
from braid.app.records import LinkLoad
from tests.integration.store.conftest import Backend


def _reservation(rid: str) -> dict[str, Any]:
    return {
        "id": rid,
        "token": rid,
        "owner": "alice",
        "state": "reserved",
        "src": "A",
        "dst": "B",
        "start": 0,
        "end": 1,
        "symmetric": True,
        "kind": "fixed",
        "request": {},
        "plan": {},
        "created_at": 0,
        "updated_at": 0,
        "version": 1,
        "seq": 0,
    }


def _stored(engine: Engine, rng: random.Random) -> list[dict[str, Any]]:
    """Random loads of two reservations on three links, stored as writes store them."""
    rows = []
    for i in range(300):
        start = rng.randrange(10_000)
        rows.append(
            {
                "reservation_id": f"r{i % 2}",
                "link_id": f"L{rng.randrange(3)}",
                "forward": rng.random() < 0.5,
                "start": start,
                "end": start + rng.choice([1, 5, 50, rng.randrange(1, 2_000)]),
                "bandwidth": 1,
                "counts_until": rng.choice([0, 5_000, 20_000]),
            }
        )
    upgrade(engine)
    with engine.begin() as connection:
        connection.execute(insert(LINKS), [{"id": f"L{n}"} for n in range(3)])
        connection.execute(insert(RESERVATIONS), [_reservation("r0"), _reservation("r1")])
        for chunk in range(0, len(rows), 70):  # several writes: the bound only rises
            writes.insert_loads(connection, rows[chunk : chunk + 70])
    return rows


def test_the_check_finds_exactly_the_overlapping_loads(sql_backend: Backend) -> None:
    assert sql_backend.url is not None
    engine = create_engine_from_url(sql_backend.url)
    rng = random.Random(7)
    try:
        rows = _stored(engine, rng)
        with engine.connect() as connection:
            for _ in range(200):
                begin = rng.randrange(-100, 10_100)
                finish = begin + rng.randrange(1, 400)
                links = rng.sample(["L0", "L1", "L2"], rng.randint(1, 3))
                now = rng.choice([0, 4_999, 10_000])
                mine = [LinkLoad(link, True, begin, finish, 1) for link in links]
                found = writes.counting_rows(connection, mine, "r1", now)
                expected = [
                    (r["link_id"], r["forward"], r["start"], r["end"])
                    for r in rows
                    if r["link_id"] in links
                    and r["start"] < finish
                    and r["end"] > begin
                    and r["counts_until"] > now
                    and r["reservation_id"] != "r1"
                ]
                assert sorted(tuple(row[1:5]) for row in found) == sorted(expected)
    finally:
        engine.dispose()


def test_sqlite_searches_a_range_bounded_on_both_sides(tmp_path: Any) -> None:
    engine = create_engine_from_url(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        _stored(engine, random.Random(3))
        seen: list[tuple[str, Any]] = []

        def keep(*args: Any) -> None:
            seen.append((args[2], args[3]))  # the statement and parameters as run

        with engine.connect() as connection:
            event.listen(connection, "before_cursor_execute", keep)
            writes.counting_rows(connection, [LinkLoad("L1", True, 500, 600, 1)], "r1", 0)
            event.remove(connection, "before_cursor_execute", keep)
            statement, params = seen[-1]
            plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params).all()
        details = " ".join(str(row[-1]) for row in plan).replace(" ", "")
        assert "USINGINDEXix_link_loads_link_id_start_end" in details, plan
        assert "start>?" in details and "start<?" in details, plan
    finally:
        engine.dispose()


def test_postgres_generic_plan_bounds_the_range(postgres_url: str) -> None:
    engine = create_engine_from_url(postgres_url)
    try:
        _stored(engine, random.Random(5))
        with engine.connect() as connection:
            raw = connection.connection.driver_connection
            assert raw is not None
            raw.execute("SET plan_cache_mode = force_generic_plan")
            names = ("links", "finish", "begin", "now", "mine")
            statement = bulk.COUNTING_LOADS
            for n, name in enumerate(names, start=1):
                statement = statement.replace(f"%({name})s", f"${n}")
            raw.execute(
                f"PREPARE check_loads(varchar[], bigint, bigint, bigint, varchar) AS {statement}"
            )
            plan = raw.execute(
                "EXPLAIN EXECUTE check_loads('{L1,L2}', 600, 500, 0, 'r1')"
            ).fetchall()
        conditions = [line for (line,) in plan if "Index Cond" in line]
        assert conditions, plan
        assert "start < $2" in conditions[0] and "start >= ($3 - $0)" in conditions[0], plan
    finally:
        engine.dispose()


def test_a_generic_plan_is_what_psycopg_prepares(postgres_url: str) -> None:
    """The statement has fixed text, so psycopg prepares it: the plan above is the one used."""
    engine = create_engine_from_url(postgres_url)
    try:
        _stored(engine, random.Random(11))
        with engine.connect() as connection:
            for _ in range(8):
                bulk.read(connection, [(["L0"], 100, 900, "r1")], 0)
            raw = connection.connection.driver_connection
            assert raw is not None
            prepared = raw.execute("SELECT statement FROM pg_prepared_statements").fetchall()
        assert any("longest_load" in statement for (statement,) in prepared)
    finally:
        engine.dispose()
