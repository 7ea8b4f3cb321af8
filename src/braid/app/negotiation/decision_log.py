"""The orchestrator's durable record of transactions and reservation outcomes (SQLite).

A transaction's decision is written here, and the write is synced, before
any participant hears it; on restart every transaction not marked done is
finished by re-sending its decision.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from braid.core.negotiation.transaction import Phase, Transaction

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS negotiation_transactions ("
    " id TEXT PRIMARY KEY, record TEXT NOT NULL, done INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS negotiation_results ("
    " reservation TEXT PRIMARY KEY, body TEXT NOT NULL)",
)


class DecisionLog:
    def __init__(self, path: Path | str, *, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous must be FULL or NORMAL")
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._lock = threading.Lock()

    def save(self, tx: Transaction) -> None:
        body = json.dumps(tx.to_record(), separators=(",", ":"))
        done = int(tx.phase is Phase.DONE)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO negotiation_transactions VALUES (?, ?, ?)",
                (tx.key, body, done),
            )

    def unfinished(self) -> list[Transaction]:
        with self._lock:
            rows = self._db.execute(
                "SELECT record FROM negotiation_transactions WHERE done = 0 ORDER BY rowid"
            ).fetchall()
        return [Transaction.from_record(json.loads(row[0])) for row in rows]

    def transaction(self, key: str) -> Transaction | None:
        with self._lock:
            row = self._db.execute(
                "SELECT record FROM negotiation_transactions WHERE id = ?", (key,)
            ).fetchone()
        return None if row is None else Transaction.from_record(json.loads(row[0]))

    def save_result(self, reservation: str, body: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO negotiation_results VALUES (?, ?)",
                (reservation, json.dumps(body, separators=(",", ":"))),
            )

    def result(self, reservation: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT body FROM negotiation_results WHERE reservation = ?", (reservation,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def close(self) -> None:
        with self._lock:
            self._db.close()
