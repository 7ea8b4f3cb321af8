"""The orchestrator's durable record of transactions and reservation outcomes (SQLite).

A transaction's decision is written here, and the write is synced, before
any participant hears it; on restart every transaction not marked done is
finished by re-sending its decision.

One writer thread does every write, in the order they came (`save` hands
it over and waits for it without blocking an event loop: `wait_all`); a
write that needs no sync, made while the writer has nothing to do, is
written at once by its caller instead.
Group commit: whatever is queued when it starts goes into one SQLite
transaction, synced once if any write in it must be durable, so decisions
of concurrent negotiations share one fsync. Writes that need no sync of
their own — a transaction logged before its first Prep, the "everyone
acknowledged" mark and the reservation's result, which recovery can rebuild
from the decision — are only written (`durable=False`): in the OS's hands
when `save` returns, carried to disk by the next synced write. The last of
them may even be left to the writer (`later=True`); every read first waits
for what was handed over before it, so nobody reads an older state.
Reads use a connection of their own: they never wait for a sync.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from braid.adapters.negotiation.hold_store import SYNC_LEVELS
from braid.app.loop_waits import wait_all
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
class _Write:
    rows: list[Row]
    results: list[tuple[str, str]]
    durable: bool
    done: Future[None] = field(default_factory=Future)


class SqliteDecisionLog:
    def __init__(self, path: Path | str, *, synchronous: str = "FULL") -> None:
        if synchronous not in SYNC_LEVELS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNC_LEVELS)}")
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._sync = synchronous
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._reader = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._read_lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        # Each key (transaction or reservation) with a write not written yet: its reads
        # wait for that write (the writer writes in order, so the latest is enough).
        self._pending: dict[str, Future[None]] = {}
        self._pending_lock = threading.Lock()
        self._connection = threading.Lock()  # the writing connection, while it writes
        self.syncs = 0  # synced writes made, for the benchmark's report
        self._writer = threading.Thread(
            target=self._write_all, name="braid-decision-log", daemon=True
        )
        self._writer.start()

    def save(
        self,
        tx: Transaction,
        *,
        result: dict[str, Any] | None = None,
        durable: bool = True,
        also: Sequence[Transaction] = (),
        later: bool = False,
    ) -> None:
        """Write the transaction (and a reservation's result and the transactions `also`
        with it, in one SQLite transaction, in this order: recovery re-sends them in
        it); `durable` returns only once it is synced to disk, else once it is written,
        or at once with `later` (not durable: the writer writes it next)."""
        rows = [_row(t) for t in (tx, *also)]
        results = [] if result is None else [(tx.reservation, _encode(result))]
        self._hand_over(_Write(rows, results, durable), wait=durable or not later)

    def save_result(self, reservation: str, body: dict[str, Any]) -> None:
        self._hand_over(_Write([], [(reservation, _encode(body))], durable=False), wait=True)

    def _hand_over(self, write: _Write, *, wait: bool) -> None:
        if wait and not write.durable and self._write_now(write):
            return
        keys = [row[0] for row in write.rows] + [reservation for reservation, _ in write.results]
        with self._pending_lock:
            for key in keys:
                self._pending[key] = write.done
        write.done.add_done_callback(lambda done: self._written(keys, done))
        self._queue.put(write)
        if wait:
            wait_all([write.done])
            write.done.result()  # raises what the write raised

    def _write_now(self, write: _Write) -> bool:
        """Write `write` in the caller's thread when the writer is idle with nothing
        queued (no hand-over then, and nothing written out of order); False if busy."""
        if not self._connection.acquire(blocking=False):
            return False
        try:
            if not self._queue.empty():
                return False
            self._write_batch([write])
        finally:
            self._connection.release()
        write.done.result()  # raises what the write raised
        return True

    def _written(self, keys: list[str], done: Future[None]) -> None:
        with self._pending_lock:
            for key in keys:
                if self._pending.get(key) is done:
                    del self._pending[key]

    def _write_all(self) -> None:
        """The writer thread: everything queued at once, in order, one sync at most."""
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while True:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._queue.put(None)  # close once this batch is written
                    break
                batch.append(more)
            with self._connection:
                self._write_batch(batch)

    def _write_batch(self, batch: list[_Write]) -> None:
        durable = any(w.durable for w in batch)
        try:
            if durable:
                self._db.execute(f"PRAGMA synchronous={self._sync}")
            try:
                with self._db:
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.executemany(_TX_ROW, [r for w in batch for r in w.rows])
                    results = [r for w in batch for r in w.results]
                    if results:
                        self._db.executemany(_RESULT_ROW, results)
            finally:
                if durable:
                    self._db.execute("PRAGMA synchronous=NORMAL")
                    self.syncs += 1
        except BaseException as exc:  # every writer of the batch hears of it
            for write in batch:
                write.done.set_exception(exc)
            return
        for write in batch:
            write.done.set_result(None)

    def _read(self, sql: str, args: tuple[Any, ...] = (), key: str | None = None) -> list[Any]:
        """Rows of `sql`, once the writes of `key` handed over before are written (of
        every key: all of them)."""
        with self._pending_lock:
            if key is None:
                pending = list(set(self._pending.values()))
            else:
                known = self._pending.get(key)
                pending = [] if known is None else [known]
        if pending:
            wait_all(pending)
        with self._read_lock:
            return self._reader.execute(sql, args).fetchall()

    def unfinished(self) -> list[Transaction]:
        rows = self._read(
            "SELECT record FROM negotiation_transactions WHERE done = 0 ORDER BY rowid"
        )
        return [Transaction.from_record(json.loads(row[0])) for row in rows]

    def transaction(self, key: str) -> Transaction | None:
        rows = self._read("SELECT record FROM negotiation_transactions WHERE id = ?", (key,), key)
        return None if not rows else Transaction.from_record(json.loads(rows[0][0]))

    def result(self, reservation: str) -> dict[str, Any] | None:
        rows = self._read(
            "SELECT body FROM negotiation_results WHERE reservation = ?",
            (reservation,),
            reservation,
        )
        return None if not rows else dict(json.loads(rows[0][0]))

    def close(self) -> None:
        self._queue.put(None)
        self._writer.join(30)
        with self._read_lock:
            self._reader.close()
        self._db.close()


def _row(tx: Transaction) -> Row:
    return (tx.key, _encode(tx.to_record()), _done(tx))


def _done(tx: Transaction) -> int:
    return int(tx.phase is Phase.DONE)


def _encode(body: dict[str, Any]) -> str:
    # The JSON `json.dumps` writes (keys that are not strings become strings), faster.
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS).decode()
