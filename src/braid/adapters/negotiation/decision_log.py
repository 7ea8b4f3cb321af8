"""The orchestrator's durable record of transactions and reservation outcomes (SQLite).

A transaction's decision is written here, and the write is synced, before
any participant hears it; on restart every transaction not marked done is
finished by re-sending its decision.

Group commit: decisions written by concurrent negotiations at the same time
share one synced SQLite transaction (one fsync). The first writer to find
no sync under way becomes the leader: it writes every decision queued so
far, syncs once, and wakes the others; each `save` still returns only once
its own decision is on disk. Writes that need no sync of their own — the
"everyone acknowledged" mark and the reservation's result, which recovery
can rebuild from the decision — go out without waiting for the disk
(`durable=False`); the write-ahead log keeps them in order behind the
decisions, and the next synced write carries them to disk too.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from braid.core.negotiation.transaction import Phase, Transaction

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS negotiation_transactions ("
    " id TEXT PRIMARY KEY, record TEXT NOT NULL, done INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS negotiation_results ("
    " reservation TEXT PRIMARY KEY, body TEXT NOT NULL)",
)
_TX_ROW = "INSERT OR REPLACE INTO negotiation_transactions VALUES (?, ?, ?)"
_RESULT_ROW = "INSERT OR REPLACE INTO negotiation_results VALUES (?, ?)"

Row = tuple[str, str, int]


@dataclass
class _Queued:
    rows: list[Row]
    results: list[tuple[str, str]]
    written: bool = False
    error: BaseException | None = None


class SqliteDecisionLog:
    def __init__(self, path: Path | str, *, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous must be FULL or NORMAL")
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._sync = synchronous
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._lock = threading.Lock()  # the connection
        self._queue_lock = threading.Condition()
        self._queue: list[_Queued] = []
        self._leading = False
        self.syncs = 0  # synced writes made, for the benchmark's report

    def save(
        self,
        tx: Transaction,
        *,
        result: dict[str, Any] | None = None,
        durable: bool = True,
        also: Sequence[Transaction] = (),
    ) -> None:
        """Write the transaction (and a reservation's result and the transactions `also`
        with it, in one SQLite transaction, in this order: recovery re-sends them in
        it); `durable` returns only once it is synced to disk."""
        rows = [_row(t) for t in (tx, *also)]
        results = [] if result is None else [(tx.reservation, _encode(result))]
        if durable:
            self._write_synced(_Queued(rows, results))
        else:
            with self._lock:
                self._write(rows, results)

    def _write_synced(self, mine: _Queued) -> None:
        with self._queue_lock:
            self._queue.append(mine)
            while not mine.written:
                if self._leading:
                    self._queue_lock.wait()
                    continue
                self._leading = True
                batch, self._queue = self._queue, []
                self._queue_lock.release()
                try:
                    self._lead(batch)
                finally:
                    self._queue_lock.acquire()
                    self._leading = False
                    self._queue_lock.notify_all()
        if mine.error is not None:
            raise mine.error

    def _lead(self, batch: list[_Queued]) -> None:
        """Write every queued decision in one synced transaction; wake their writers."""
        try:
            with self._lock:
                self._db.execute(f"PRAGMA synchronous={self._sync}")
                try:
                    self._write(
                        [r for q in batch for r in q.rows], [r for q in batch for r in q.results]
                    )
                finally:
                    self._db.execute("PRAGMA synchronous=NORMAL")
                self.syncs += 1
        except BaseException as exc:  # every writer of the batch hears of it
            for queued in batch:
                queued.error = exc
        for queued in batch:
            queued.written = True

    def _write(self, rows: list[Row], results: list[tuple[str, str]]) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(_TX_ROW, rows)
            if results:
                self._db.executemany(_RESULT_ROW, results)

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
            self._db.execute(_RESULT_ROW, (reservation, _encode(body)))

    def result(self, reservation: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT body FROM negotiation_results WHERE reservation = ?", (reservation,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _row(tx: Transaction) -> Row:
    return (tx.key, _encode(tx.to_record()), _done(tx))


def _done(tx: Transaction) -> int:
    return int(tx.phase is Phase.DONE)


def _encode(body: dict[str, Any]) -> str:
    # The JSON `json.dumps` writes (keys that are not strings become strings), faster.
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS).decode()
