"""The store's loads check with a long history: bounded by `links.longest_load`, or not.

Run from the repository root:

    .venv/bin/python bench/loads_check_bench.py [--years 2] [--links 8] [--checks 300]

A write checks the loads of others on its links that overlap its window
(`writes.counting_rows`, `bulk.read` on PostgreSQL). Here a store holds
`--years` of past loads on `--links` links (back to back, 10 min - 6 h each,
so every link carries thousands), one week of future ones, and the check is
asked for random windows in the coming week, as new reservations ask it:

- *bounded*: the store's own check, which reads from the window's begin less
  the links' longest load;
- *baseline*: the statement before that bound (every load that starts before
  the window ends), run on the same store in the same run.

Both must return the same rows. Latency is wall time per check, median and
p90; the checks run as the service runs them (on PostgreSQL through
psycopg, which prepares a statement from its sixth run on, so the generic
plan is measured too). PostgreSQL comes from BRAID_TEST_POSTGRES_URL or
scripts/pg-test-server, as for service_bench.py; without it that part is
skipped with a note.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine, bindparam, insert, select, text

from braid.adapters.store import bulk, writes
from braid.adapters.store.codec import LINKS, LOADS, RESERVATIONS
from braid.adapters.store.engine import create_engine_from_url, upgrade
from braid.app.records import LinkLoad
from service_store import Postgres, postgres_url
from workload import MAX_DURATION, MIN_DURATION, T0, WEEK, log_uniform

YEAR: Final = 365 * 86_400
NOW: Final = T0  # the history ends here; the checked windows begin after it

# The check before `links.longest_load`: every load starting before the window ends.
_BASELINE_SQLITE: Final = select(
    LOADS.c.id, LOADS.c.link_id, LOADS.c.forward, LOADS.c.start, LOADS.c.end, LOADS.c.bandwidth
).where(
    LOADS.c.link_id.in_(bindparam("links", expanding=True)),
    LOADS.c.start < bindparam("finish"),
    LOADS.c.end > bindparam("begin"),
    LOADS.c.reservation_id != bindparam("mine"),
    LOADS.c.counts_until > bindparam("now"),
)
_BASELINE_POSTGRES: Final = """
SELECT id, link_id, forward, start, "end", bandwidth FROM link_loads
WHERE link_id = ANY(%s::varchar[]) AND start < %s AND "end" > %s
  AND counts_until > %s AND reservation_id <> %s
"""

Check = Callable[[Connection, Sequence[LinkLoad]], list[tuple[Any, ...]]]


def history(links: int, years: float, rng: random.Random) -> list[dict[str, Any]]:
    """Loads back to back on every link: `years` before NOW, a week after it."""
    rows: list[dict[str, Any]] = []
    for n in range(links):
        at = NOW - int(years * YEAR)
        while at < NOW + WEEK:
            end = at + int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
            rows.append(_load(f"L{n}", at, end))
            at = end
    return rows


def _load(link: str, start: int, end: int) -> dict[str, Any]:
    # Past loads no longer count (their end is gone); the check still reads them
    # unless its range scan stops before them.
    return {
        "reservation_id": "history",
        "link_id": link,
        "forward": True,
        "start": start,
        "end": end,
        "bandwidth": 1_000_000,
        "counts_until": end,
    }


def fill(engine: Engine, links: int, rows: list[dict[str, Any]]) -> None:
    """Migrate, then store the rows as the store would (raising `longest_load`)."""
    upgrade(engine)
    with engine.begin() as connection:
        connection.execute(insert(LINKS), [{"id": f"L{n}"} for n in range(links)])
        connection.execute(insert(RESERVATIONS), [_history_reservation()])
        for chunk in range(0, len(rows), 20_000):
            writes.insert_loads(connection, rows[chunk : chunk + 20_000])
        if engine.dialect.name == "postgresql":
            connection.execute(text("ANALYZE"))


def _history_reservation() -> dict[str, Any]:
    return {
        "id": "history",
        "token": "history",
        "owner": "bench",
        "state": "finished",
        "src": "A",
        "dst": "B",
        "start": NOW - YEAR,
        "end": NOW,
        "symmetric": True,
        "kind": "fixed",
        "request": {},
        "plan": {},
        "created_at": 0,
        "updated_at": 0,
        "version": 1,
        "seq": 0,
    }


def windows(links: int, count: int, rng: random.Random) -> list[list[LinkLoad]]:
    """The loads of new reservations in the coming week, on 1-3 of the links."""
    out = []
    for _ in range(count):
        begin = NOW + rng.randrange(WEEK)
        end = begin + int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
        chosen = rng.sample(range(links), rng.randint(1, min(3, links)))
        out.append([LinkLoad(f"L{n}", True, begin, end, 1_000_000) for n in chosen])
    return out


def bounded(connection: Connection, mine: Sequence[LinkLoad]) -> list[tuple[Any, ...]]:
    return writes.counting_rows(connection, mine, "new", NOW)


def baseline(connection: Connection, mine: Sequence[LinkLoad]) -> list[tuple[Any, ...]]:
    begin = min(load.start for load in mine)
    finish = max(load.end for load in mine)
    links = sorted({load.link for load in mine})
    if writes.is_postgres(connection):
        raw = connection.connection.driver_connection
        params = (bulk.text_array(links), finish, begin, NOW, "new")
        return list(raw.execute(_BASELINE_POSTGRES, params).fetchall())  # type: ignore[union-attr]
    values = {"links": links, "begin": begin, "finish": finish, "mine": "new", "now": NOW}
    return [tuple(row) for row in connection.execute(_BASELINE_SQLITE, values).all()]


def timed(
    engine: Engine, check: Check, asks: list[list[LinkLoad]]
) -> tuple[list[float], list[Any]]:
    """Milliseconds per check and the rows each found, on one connection (as a writer holds one)."""
    times, found = [], []
    with engine.connect() as connection:
        for mine in asks:
            began = time.perf_counter_ns()
            rows = check(connection, mine)
            times.append((time.perf_counter_ns() - began) / 1e6)
            found.append(sorted(rows))
        connection.rollback()
    return times, found


def measure(label: str, engine: Engine, asks: list[list[LinkLoad]], stored: int) -> bool:
    old_ms, old_rows = timed(engine, baseline, asks)
    new_ms, new_rows = timed(engine, bounded, asks)
    same = old_rows == new_rows
    old, new = statistics.median(old_ms), statistics.median(new_ms)
    print(
        f"{label:11}{stored:>9,}{new:>10.3f}ms{_p90(new_ms):>9.3f}ms"
        f"{old:>10.3f}ms{_p90(old_ms):>9.3f}ms{old / new:>8.1f}x  {'yes' if same else 'NO'}"
    )
    return same


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=float, default=2.0, help="history before now")
    parser.add_argument("--links", type=int, default=8)
    parser.add_argument("--checks", type=int, default=300, help="checks per store and statement")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    rows = history(args.links, args.years, rng)
    asks = windows(args.links, args.checks, rng)
    print(f"{len(rows):,} loads on {args.links} links: {args.years:g} years back, one week ahead")
    print(
        f"{'store':11}{'loads':>9}{'bounded p50':>12}{'p90':>10}{'baseline p50':>13}{'p90':>10}"
        f"{'ratio':>9}  same rows"
    )
    ok = True
    with tempfile.TemporaryDirectory(prefix="braid-loads-bench-") as scratch:
        engine = create_engine_from_url(f"sqlite:///{Path(scratch) / 'store.db'}")
        fill(engine, args.links, rows)
        ok &= measure("SQLite", engine, asks, len(rows))
        engine.dispose()
    url, source = postgres_url()
    if url is None:
        print(f"PostgreSQL skipped: {source}")
        return 0 if ok else 1
    server = Postgres(url)
    try:
        engine = create_engine_from_url(server.create("loads"))
        fill(engine, args.links, rows)
        ok &= measure("PostgreSQL", engine, asks, len(rows))
        engine.dispose()
    finally:
        server.drop_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
