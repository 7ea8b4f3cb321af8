"""Who asked for which multi-domain reservation: a SQLite table next to the decision log."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from braid.app.interdomain import Entry

__all__ = ["SqliteOwnerBook"]


class SqliteOwnerBook:
    """Who asked for which multi-domain reservation (SQLite, next to the decision log)."""

    _SCHEMA = (
        "CREATE TABLE IF NOT EXISTS interdomain_owners ("
        " id TEXT PRIMARY KEY, owner TEXT NOT NULL, created_at INTEGER NOT NULL,"
        " request TEXT NOT NULL)"
    )

    def __init__(self, path: Path | str) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # No sync of its own: the row sits in the same write-ahead log as the
        # decision log's, whose synced write of the decision carries it to disk
        # before any domain hears a Commit.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(self._SCHEMA)
        self._lock = threading.Lock()

    def add(self, entry: Entry) -> None:
        body = json.dumps(entry.request, separators=(",", ":"))
        with self._lock:
            self._db.execute(
                "INSERT INTO interdomain_owners VALUES (?, ?, ?, ?)",
                (entry.id, entry.owner, entry.created_at, body),
            )

    def remove(self, reservation: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM interdomain_owners WHERE id = ?", (reservation,))

    def get(self, reservation: str) -> Entry | None:
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM interdomain_owners WHERE id = ?", (reservation,)
            ).fetchone()
        return None if row is None else Entry(row[0], row[1], row[2], json.loads(row[3]))

    def find(self, owner: str | None, limit: int) -> list[Entry]:
        """Newest first; every owner's when `owner` is None."""
        where, args = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        query = f"SELECT * FROM interdomain_owners {where} ORDER BY created_at DESC, id LIMIT ?"
        with self._lock:
            rows = self._db.execute(query, (*args, limit)).fetchall()
        return [Entry(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
