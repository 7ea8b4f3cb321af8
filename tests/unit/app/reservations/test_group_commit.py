"""Group commit: concurrent admissions share transactions, and each gets its own answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from braid.app.ports import ConflictError, WriteStep
from braid.app.records import Reservation
from braid.app.reservations.group_commit import GroupCommit
from braid.app.reservations.memory_store import MemoryRepository
from tests.integration.store.workload import GBIT, capacity_validator, change, reservation


def step(rid: str, bandwidth: int = GBIT) -> WriteStep:
    ch = change(reservation(rid, bandwidth=bandwidth))
    return WriteStep(ch, capacity_validator(ch.loads), "created")


class SlowRepository(MemoryRepository):
    """Holds every batch until released, and records the batch sizes."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.batches: list[int] = []
        self.failure: Exception | None = None
        self.pause = 0.0  # seconds each batch takes once released

    def write_new(
        self, items: Sequence[tuple[WriteStep, str]], *, now: int
    ) -> list[Reservation | ConflictError]:
        self.release.wait(timeout=10)
        time.sleep(self.pause)
        self.batches.append(len(items))
        if self.failure is not None:
            raise self.failure
        return super().write_new(items, now=now)


def write_all(group: GroupCommit, steps: list[WriteStep]) -> list[Any]:
    def one(s: WriteStep) -> Any:
        try:
            return group.write(s, "alice", 100)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(len(steps)) as pool:
        futures = [pool.submit(one, s) for s in steps]
        return [f.result(timeout=30) for f in futures]


def test_writers_arriving_during_a_write_share_the_next_transaction() -> None:
    repo = SlowRepository()
    group = GroupCommit(repo)
    first = threading.Thread(target=group.write, args=(step("first"), "alice", 100))
    first.start()
    while not group._writing:  # the first writer leads and waits in the store
        pass
    with ThreadPoolExecutor(5) as pool:
        later = [pool.submit(group.write, step(f"r{n}"), "alice", 100) for n in range(5)]
        while len(group._queue) < 5:
            pass
        repo.release.set()
        stored = [f.result(timeout=10) for f in later]
    first.join(timeout=10)
    assert repo.batches == [1, 5]
    assert sorted(r.id for r in stored) == [f"r{n}" for n in range(5)]
    assert {r.id for r in repo.booked()} == {"first", *(f"r{n}" for n in range(5))}


def test_each_writer_gets_its_own_answer_and_nothing_is_overbooked() -> None:
    repo = MemoryRepository()
    group = GroupCommit(repo, max_batch=4)
    # 3 Gbit/s each on 10 Gbit/s links: exactly three fit.
    outcomes = write_all(group, [step(f"r{n}", 3 * GBIT) for n in range(12)])
    stored = [o for o in outcomes if isinstance(o, Reservation)]
    refused = [o for o in outcomes if isinstance(o, ConflictError)]
    assert len(stored) == 3 and len(refused) == 9
    assert {r.id for r in repo.booked()} == {r.id for r in stored}


def test_a_store_failure_reaches_every_writer_of_the_batch() -> None:
    repo = SlowRepository()
    repo.failure = RuntimeError("the database went away")
    repo.release.set()
    outcomes = write_all(GroupCommit(repo), [step(f"r{n}") for n in range(4)])
    assert all(isinstance(o, RuntimeError) for o in outcomes)
    assert repo.booked() == []
    with pytest.raises(RuntimeError, match="went away"):
        GroupCommit(repo).write(step("again"), "alice", 100)


def test_a_leader_queued_behind_a_full_batch_still_gets_its_answer() -> None:
    """Batches of 2 with many writers: some lead a batch without their own item."""
    repo = SlowRepository()
    repo.release.set()
    repo.pause = 0.005  # long enough for the queue to grow past a batch
    group = GroupCommit(repo, max_batch=2)
    outcomes = write_all(group, [step(f"r{n}", GBIT // 10) for n in range(24)])
    assert all(isinstance(o, Reservation) for o in outcomes), outcomes
    assert max(repo.batches) <= 2 and sum(repo.batches) == 24
    assert len(repo.booked()) == 24
