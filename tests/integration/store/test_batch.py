"""Group-commit batches on links that have their lock rows (a stored topology).

The other store tests mostly write on links no topology named, so each
write first creates their rows; here the rows exist, as in a running
service, and the batch takes its usual path (on PostgreSQL: one statement
for the locks, one per booking for the loads, one for every row). Run
against memory, SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from braid.adapters.store import SqlRepository, batch, open_repository
from braid.app.ports import ConflictError, WriteStep
from braid.app.records import Reservation
from braid.core.model.paths import Path
from tests.integration.store.conftest import Backend
from tests.integration.store.workload import (
    GBIT,
    book,
    capacity_validator,
    change,
    loads_of,
    reservation,
)

# Link ids that an array literal or a quoted list must carry intact.
ODD = ('q"uote', "com,ma", "back\\slash", "{brace}", " space ")
ODD_PATH = Path(("A", "B", "C", "D", "E", "F"), ODD)


def _with_topology(repo: Any) -> Any:
    """`repo` with a topology naming the odd links (so their lock rows exist)."""
    links = [{"id": link, "a": a, "b": b} for link, a, b in zip(ODD, "ABCDE", "BCDEF", strict=True)]
    repo.put_topology({"nodes": [], "links": links}, now=1, actor="ops")
    return repo


@pytest.fixture
def stored(repo: Any) -> Any:
    return _with_topology(repo)


@pytest.fixture
def sql_stored(sql_backend: Backend) -> SqlRepository:
    repo: SqlRepository = _with_topology(sql_backend.open())
    return repo


def _step(rid: str, bandwidth: int, start: int = 1_000, end: int = 2_000, token: str = "") -> Any:
    res = reservation(rid, bandwidth=bandwidth, start=start, end=end, path=ODD_PATH)
    if token:
        res = replace(res, token=token)
    ch = change(res, 1)
    return WriteStep(ch, capacity_validator(ch.loads), "created"), "alice"


def test_a_batch_checks_odd_link_ids_against_what_is_stored(stored: Any) -> None:
    book(stored, reservation("old", bandwidth=6 * GBIT, path=ODD_PATH))
    outcomes = stored.write_new([_step("fits", 4 * GBIT), _step("over", GBIT)], now=100)
    assert isinstance(outcomes[0], Reservation) and outcomes[0] == stored.get("fits")
    assert isinstance(outcomes[1], ConflictError)
    assert all(link in " ".join(outcomes[1].problems) for link in ODD)
    assert stored.get("over") is None
    written = [load for rid, load in stored.link_loads() if rid == "fits"]
    assert sorted(written) == sorted(loads_of(outcomes[0]))


def test_a_load_two_windows_meet_counts_once(stored: Any) -> None:
    """Old (5) + first (4) = 9 and old + first + second (1) = 10: both fit, if old counts once."""
    book(stored, reservation("old", bandwidth=5 * GBIT, start=1_000, end=2_500, path=ODD_PATH))
    steps = [_step("first", 4 * GBIT, 1_000, 2_000), _step("second", GBIT, 1_500, 2_500)]
    outcomes = stored.write_new(steps, now=100)
    assert [type(o).__name__ for o in outcomes] == ["Reservation", "Reservation"]


def test_a_token_in_use_refuses_the_whole_batch(sql_stored: SqlRepository) -> None:
    stored = sql_stored
    book(stored, reservation("old", path=ODD_PATH))
    cursor = stored.cursor()
    with pytest.raises(ConflictError):
        outcomes = stored.write_new([_step("a", GBIT), _step("b", GBIT, token="token-old")], now=9)
        raise next(o for o in outcomes if isinstance(o, ConflictError))
    assert stored.get("a") is None and stored.get("b") is None
    assert stored.cursor() == cursor
    assert [e.reservation_id for e in stored.audit() if e.action == "created"] == ["old"]


def test_a_batch_on_an_old_topology_writes_nothing(stored: Any) -> None:
    stored.put_topology({"nodes": [], "links": []}, now=2, actor="ops")
    with pytest.raises(ConflictError, match="topology"):
        stored.write_new([_step("a", GBIT)], now=100)
    assert stored.get("a") is None


def test_the_batch_reports_the_cursor_value_its_rows_carry(sql_stored: SqlRepository) -> None:
    stored = sql_stored
    before = stored.cursor()
    with stored.engine.begin() as connection:
        outcomes, seq = batch.write_batch(connection, [_step("a", GBIT), _step("b", GBIT)], 100)
    assert seq == before + 1 == stored.cursor()
    changed, cursor = stored.changes_since(before)
    assert sorted(r.id for r in changed) == ["a", "b"] and cursor == seq
    assert [r.id for r in outcomes if isinstance(r, Reservation)] == ["a", "b"]


def test_a_batch_that_stores_nothing_takes_no_cursor_value(sql_stored: SqlRepository) -> None:
    stored = sql_stored
    book(stored, reservation("old", bandwidth=10 * GBIT, path=ODD_PATH))
    before = stored.cursor()
    with stored.engine.begin() as connection:
        outcomes, seq = batch.write_batch(connection, [_step("a", GBIT)], 100)
    assert isinstance(outcomes[0], ConflictError) and seq is None
    assert stored.cursor() == before


def test_driver_errors_arrive_as_sqlalchemy_errors(postgres_url: str) -> None:
    """What `collisions_as_conflicts` turns into a ConflictError must still be a DBAPIError."""
    repo = _with_topology(open_repository(postgres_url))
    try:
        with repo.engine.begin() as holder:
            holder.execute(text("SELECT id FROM links WHERE id = :id FOR UPDATE"), {"id": ODD[2]})
            with pytest.raises(DBAPIError) as caught, repo.engine.begin() as connection:
                connection.execute(text("SET LOCAL lock_timeout = '20ms'"))
                batch.write_new(connection, [_step("a", GBIT)], 100)
        assert getattr(caught.value.orig, "sqlstate", None) == "55P03"  # lock not available
        assert repo.get("a") is None
    finally:
        repo.close()
