"""An agent's hold store syncs each write by default (a yes vote survives the machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.negotiation.hold_store import SqliteHoldStore

# SQLite's numbers for PRAGMA synchronous.
LEVELS = {"NORMAL": 1, "FULL": 2}


def level_of(store: SqliteHoldStore) -> int:
    return int(store._db.execute("PRAGMA synchronous").fetchone()[0])


def test_every_write_is_synced_unless_asked_otherwise(tmp_path: Path) -> None:
    store = SqliteHoldStore(tmp_path / "holds.db")
    assert level_of(store) == LEVELS["FULL"]
    store.close()
    store = SqliteHoldStore(tmp_path / "holds.db", synchronous="NORMAL")
    assert level_of(store) == LEVELS["NORMAL"]
    store.close()


def test_an_unknown_level_is_refused_before_the_file_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="FULL, NORMAL"):
        SqliteHoldStore(tmp_path / "holds.db", synchronous="OFF")
    assert not (tmp_path / "holds.db").exists()
