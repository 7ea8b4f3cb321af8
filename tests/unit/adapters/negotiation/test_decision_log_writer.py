"""The decision log's writer: order, durability levels, reads that see what was handed over."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from braid.adapters.negotiation.decision_log import SqliteDecisionLog
from braid.core.negotiation.transaction import Transaction, Vote

TOKEN = "t" * 20


def decided(tx_id: str) -> Transaction:
    tx = Transaction(tx_id, f"r-{tx_id}", ("w1",), TOKEN)
    tx.record_vote("w1", Vote(True))
    tx.decide()
    return tx


def test_a_write_left_to_the_writer_is_seen_by_the_next_read(tmp_path: Path) -> None:
    log = SqliteDecisionLog(tmp_path / "o.db")
    try:
        for i in range(200):
            tx = decided(f"tx{i}")
            per_path: dict[int, int] = {0: i}  # keys that are not strings, as json writes them
            log.save(tx, result={"n": i, "per_path": per_path}, later=True)
            assert log.result(tx.reservation) == {"n": i, "per_path": {"0": i}}
            assert log.transaction(tx.key) == tx
    finally:
        log.close()


def test_writes_are_written_in_the_order_they_came(tmp_path: Path) -> None:
    log = SqliteDecisionLog(tmp_path / "o.db")
    tx = decided("tx")
    log.save(tx, durable=True)
    for domain in ("w1",):
        tx.record_ack(domain)
        log.save(tx, durable=False, later=True)  # done after the decision, never before
    log.close()
    reopened = SqliteDecisionLog(tmp_path / "o.db")
    assert reopened.unfinished() == [] and reopened.transaction("tx") == tx
    reopened.close()


def test_a_write_that_fails_fails_its_save(tmp_path: Path) -> None:
    log = SqliteDecisionLog(tmp_path / "o.db")
    with sqlite3.connect(tmp_path / "o.db") as db:  # another writer holds the database
        db.execute("BEGIN EXCLUSIVE")
        log._db.execute("PRAGMA busy_timeout = 0")
        with pytest.raises(sqlite3.OperationalError):
            log.save(decided("tx"), durable=True)
        db.rollback()
    log.save(decided("tx2"), durable=True)  # the writer goes on
    assert log.transaction("tx2") is not None
    log.close()


def test_saves_from_many_threads_are_all_there(tmp_path: Path) -> None:
    log = SqliteDecisionLog(tmp_path / "o.db")
    threads = [
        threading.Thread(target=log.save, args=(decided(f"tx{i}"),), kwargs={"durable": i % 2 == 0})
        for i in range(24)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(log.transaction(f"tx{i}") is not None for i in range(24))
    log.close()
