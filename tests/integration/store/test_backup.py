"""Backup, wipe, restore: every row comes back, across SQLite and PostgreSQL alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, Select, Table, create_engine, select, text

from braid.adapters.store import open_repository
from braid.app.auth import create_token
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.service import ReservationService
from braid.bootstrap.database import backup_store, restore_store, upgrade_store
from braid.bootstrap.serve import initial_topology
from braid.core.errors import InputError
from tests.integration.store.conftest import sqlite_url

EXAMPLE = Path(__file__).resolve().parents[3] / "src" / "braid" / "examples" / "science-net.yaml"
NOW = 1_900_000_000


def _fill(url: str, day: int = 0) -> None:
    """Reservations (split, held, cancelled), tokens, audit entries, as a real service writes."""
    repo = open_repository(url)
    try:
        service = ReservationService(repo, clock=lambda: NOW)
        service.start(initial_topology(EXAMPLE, None))
        create_token(repo, "alice", "user", NOW)
        alice = User("alice", "user")
        asked: list[dict[str, Any]] = [
            {},
            {"bandwidth": "80G", "max_paths": 3},
            {"hold": True},
            {"src": "ANL"},
        ]
        for hours, extra in enumerate(asked, start=1):
            start = NOW + day * 86400 + hours * 3600
            sent = {"src": "ORNL", "dst": "NERSC", "bandwidth": "10G"} | extra
            sent |= {"start": start, "end": start + 1800}
            made = service.reserve(alice, Reserve.parse(sent))
        service.cancel(alice, made.record.id)
    finally:
        repo.close()


def _rows(url: str) -> dict[str, list[dict[str, Any]]]:
    engine = create_engine(url)
    try:
        found = MetaData()
        with engine.connect() as connection:
            found.reflect(connection)
            return {
                t.name: [
                    dict(r)
                    for r in connection.execute(
                        select(t).order_by(*t.primary_key.columns)
                    ).mappings()
                ]
                for t in found.sorted_tables
            }
    finally:
        engine.dispose()


def _ordered(table: Table) -> Select[Any]:
    return select(table).order_by(*table.primary_key.columns)


def _wipe(url: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("DROP SCHEMA public CASCADE"))
                connection.execute(text("CREATE SCHEMA public"))
            else:
                for (name,) in connection.execute(
                    text("SELECT name FROM sqlite_master WHERE type = 'table'")
                ).all():
                    connection.execute(text(f'DROP TABLE IF EXISTS "{name}"'))
    finally:
        engine.dispose()


def _total(rows: dict[str, list[dict[str, Any]]]) -> int:
    return sum(len(found) for name, found in rows.items() if name != "alembic_version")


def _url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "sqlite":
        return sqlite_url(tmp_path)
    return str(request.getfixturevalue("postgres_url"))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_backup_wipe_restore_loses_nothing(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = _url(kind, request, tmp_path)
    _fill(url)
    before = _rows(url)
    assert len(before["reservations"]) == 4 and before["reservation_paths"] and before["tokens"]
    saved = backup_store(url, tmp_path / "braid.backup")
    assert saved.total == sum(
        len(rows) for name, rows in before.items() if name != "alembic_version"
    )
    _wipe(url)
    restored = restore_store(url, tmp_path / "braid.backup")
    assert restored.rows == saved.rows
    assert _rows(url) == before
    # The restored store takes new bookings (ids and sequences go on from the restored ones).
    _fill(url, day=1)
    assert len(_rows(url)["reservations"]) == 8


def test_a_sqlite_store_moves_to_postgresql(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    source, target = sqlite_url(tmp_path), str(request.getfixturevalue("postgres_url"))
    _fill(source)
    backup_store(source, tmp_path / "braid.backup")
    restore_store(target, tmp_path / "braid.backup")
    assert _rows(target) == _rows(source)


def test_a_store_that_holds_rows_is_refused_and_kept(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    _fill(url)
    backup_store(url, tmp_path / "braid.backup")
    before = _rows(url)
    with pytest.raises(InputError, match=r"is not empty.*--replace"):
        restore_store(url, tmp_path / "braid.backup")
    assert _rows(url) == before
    restore_store(url, tmp_path / "braid.backup", replace=True)
    assert _rows(url) == before


def test_a_cut_backup_changes_nothing(tmp_path: Path) -> None:
    source, target = sqlite_url(tmp_path / "a"), sqlite_url(tmp_path)
    (tmp_path / "a").mkdir()
    _fill(source)
    backup_store(source, tmp_path / "braid.backup")
    lines = (tmp_path / "braid.backup").read_text().splitlines(keepends=True)
    (tmp_path / "cut.backup").write_text("".join(lines[:-3]))
    upgrade_store(target)
    before = _rows(target)
    with pytest.raises(InputError, match="cut short"):
        restore_store(target, tmp_path / "cut.backup")
    assert _rows(target) == before
    (tmp_path / "bad.backup").write_text("not a backup\n")
    with pytest.raises(InputError, match="line 1"):
        restore_store(target, tmp_path / "bad.backup")


def test_upgrade_reports_the_revisions(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    before, after = upgrade_store(url)
    assert before is None and after
    assert upgrade_store(url) == (after, after)
