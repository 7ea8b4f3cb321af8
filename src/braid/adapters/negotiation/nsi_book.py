"""The NSI connections braid made for each transaction: a SQLite table next to the decision log."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

__all__ = ["SqliteConnectionBook"]


class SqliteConnectionBook:
    """(transaction, domain) -> the NSI connection ids its reserves got (the `ConnectionBook`)."""

    _SCHEMA = (
        "CREATE TABLE IF NOT EXISTS nsi_requested ("
        " tx TEXT NOT NULL, domain TEXT NOT NULL, connection_id TEXT NOT NULL,"
        " seq INTEGER NOT NULL, PRIMARY KEY (tx, domain, connection_id))"
    )

    def __init__(self, path: Path | str, synchronous: str = "FULL") -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # Synced like the decision log: the id must outlive a crash of the machine too,
        # or recovery would have to find the connection by its global reservation id.
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous: not a SQLite level: {synchronous!r}")
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.execute(self._SCHEMA)
        self._lock = threading.Lock()

    def add(self, transaction: str, domain: str, connection_id: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO nsi_requested VALUES (?, ?, ?,"
                " (SELECT COUNT(*) FROM nsi_requested WHERE tx = ? AND domain = ?))",
                (transaction, domain, connection_id, transaction, domain),
            )

    def connections(self, transaction: str, domain: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT connection_id FROM nsi_requested WHERE tx = ? AND domain = ? ORDER BY seq",
                (transaction, domain),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
