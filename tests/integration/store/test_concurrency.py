"""Concurrent writers never overbook a link, and the change cursor misses nothing."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from typing import Any

from braid.adapters.store import SqlRepository
from braid.app.ports import ConflictError, Repository, WriteStep
from braid.app.records import Reservation
from braid.core.planning.lifecycle import State
from tests.integration.store.conftest import Backend
from tests.integration.store.workload import (
    GBIT,
    Outcome,
    book,
    capacity_validator,
    change,
    memory_overbooking,
    process_writer,
    reservation,
    run_writer,
    table_overbooking,
)

THREADS = 8
WRITES_PER_THREAD = 12


def overbooking(repo: Any) -> list[str]:
    return table_overbooking(repo) if isinstance(repo, SqlRepository) else memory_overbooking(repo)


def check(repo: Any, outcomes: list[Outcome], attempts: int) -> None:
    """No overbooking, every write accounted for, and the store holds exactly the successes."""
    assert [e for o in outcomes for e in o.errors] == []
    written = {rid for o in outcomes for rid in o.written}
    conflicts = sum(o.conflicts for o in outcomes)
    assert len(written) + conflicts == attempts
    # 3 Gbit/s each on 10 Gbit/s links, windows crowded into [0, 140): both happen.
    assert written and conflicts
    assert overbooking(repo) == []
    stored = {r.id for r in repo.changes_since(0)[0]}
    assert stored == written
    cancelled = {rid for o in outcomes for rid in o.cancelled}
    assert {r.id for r in repo.booked()} == written - cancelled


def test_threads_never_overbook(backend: Backend) -> None:
    repo = backend.open()
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [
            pool.submit(run_writer, repo, f"t{n}", WRITES_PER_THREAD, seed=n)
            for n in range(THREADS)
        ]
        outcomes = [f.result() for f in futures]
    check(repo, outcomes, THREADS * WRITES_PER_THREAD)


def test_processes_never_overbook(sql_backend: Backend) -> None:
    repo = sql_backend.open()  # migrates; the workers only connect
    assert sql_backend.url is not None
    spawn = get_context("spawn")  # fresh interpreters: nothing shared but the database
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        futures = [pool.submit(process_writer, sql_backend.url, f"p{n}", 10, n) for n in range(2)]
        outcomes = [f.result(timeout=120) for f in futures]
    check(repo, outcomes, 2 * 4 * 10)


def test_changes_since_misses_nothing_under_concurrent_writers(backend: Backend) -> None:
    repo = backend.open()
    done = threading.Event()
    seen: dict[str, Reservation] = {}

    def follow() -> None:
        cursor = 0
        while True:
            finished = done.is_set()  # read before polling: one more poll after the end
            changes, newer = repo.changes_since(cursor)
            assert newer >= cursor
            seen.update((r.id, r) for r in changes)
            cursor = newer
            if finished:
                return

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda n: _write_and_cancel(repo, n), range(4)))
    finally:
        done.set()
        follower.join(timeout=60)
    final = {r.id: r for r in repo.changes_since(0)[0]}
    assert sorted(seen) == sorted(rid for ids in results for rid in ids) == sorted(final)
    assert seen == final  # the follower ends with every reservation's latest version


def _write_and_cancel(repo: Repository, n: int) -> list[str]:
    """Bookings on links of this writer's own (no conflicts), half of them cancelled."""
    ids = []
    for i in range(15):
        res = reservation(f"w{n}-{i}", bandwidth=GBIT // 10, start=i, end=i + 10)
        book(repo, res, now=i)
        if i % 2:
            repo.set_state(res.id, State.CANCELLED, now=i, actor="w", detail={})
        ids.append(res.id)
    return ids


def _batch_writer(repo: Any, name: str, seed: int) -> tuple[list[str], int]:
    """Batches of 3 random 3-Gbit/s bookings through `write_new`; (written ids, refusals)."""
    rng = random.Random(seed)
    written: list[str] = []
    refused = 0
    for b in range(6):
        steps = []
        for i in range(3):
            start = rng.randrange(0, 100)
            res = reservation(f"{name}-{b}-{i}", start=start, end=start + 30, bandwidth=3 * GBIT)
            ch = change(res)
            steps.append((WriteStep(ch, capacity_validator(ch.loads), "created"), name))
        try:
            outcomes = repo.write_new(steps, now=b)
        except ConflictError:
            refused += len(steps)
            continue
        written += [o.id for o in outcomes if isinstance(o, Reservation)]
        refused += sum(isinstance(o, ConflictError) for o in outcomes)
    return written, refused


def test_batches_from_many_threads_never_overbook(backend: Backend) -> None:
    repo = backend.open()
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda n: _batch_writer(repo, f"b{n}", n), range(THREADS)))
    written = {rid for ids, _ in results for rid in ids}
    assert len(written) + sum(r for _, r in results) == THREADS * 6 * 3
    assert written and any(r for _, r in results)  # both happen
    assert overbooking(repo) == []
    assert {r.id for r in repo.booked()} == written
    assert {r.id for r in repo.changes_since(0)[0]} == written
