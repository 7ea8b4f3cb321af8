"""With a change feed, a replica's mirror reads the store only when it must.

Two services share one in-memory store; each sees it through a repository
that counts store reads (`changes_since`) and tells that replica's fake feed
the cursor values of its own writes, as `SqlRepository` tells its listener.
The test decides when a feed "hears" a notification, so every interleaving
is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from braid.app.errors import RejectedError
from braid.app.ports import FeedNews
from braid.app.records import Reservation, User
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.core.model.instants import format_instant
from tests.unit.app.reservations.rest_shape import rest

T0 = 1_800_000_000
ALICE = User("alice", "user")
LINE: dict[str, Any] = {
    "nodes": [{"id": "A"}, {"id": "B"}],
    "links": [{"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1}],
}


class FakeFeed:
    """A feed whose notifications arrive when the test says `hear`."""

    def __init__(self) -> None:
        self.listening = True
        self.epoch = 1
        self.heard = 0
        self.written: dict[int, frozenset[tuple[str, int]]] = {}

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.listening = False

    def hear(self, cursor: int) -> None:
        self.heard = max(self.heard, cursor)

    def news(self, since: int) -> FeedNews | None:
        if not self.listening:
            return None
        latest = max(self.heard, max(self.written, default=0))
        return FeedNews(self.epoch, latest, {s: w for s, w in self.written.items() if s > since})


class Replica:
    """One replica's view of the shared store: counts reads, reports own writes to its feed."""

    def __init__(self, store: MemoryRepository, feed: FakeFeed) -> None:
        self.store = store
        self.feed = feed
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def changes_since(self, cursor: int) -> tuple[list[Reservation], int]:
        self.reads += 1
        return self.store.changes_since(cursor)

    def write_new(self, items: Any, *, now: int) -> list[Any]:
        return self._reporting(lambda: self.store.write_new(items, now=now))

    def write(self, change: Any, **options: Any) -> Reservation:
        stored: Reservation = self._reporting(lambda: [self.store.write(change, **options)])[0]
        return stored

    def set_state(self, reservation_id: str, state: Any, **options: Any) -> Reservation:
        stored: Reservation = self._reporting(
            lambda: [self.store.set_state(reservation_id, state, **options)]
        )[0]
        return stored

    def _reporting(self, write: Callable[[], list[Any]]) -> list[Any]:
        before = self.store.cursor()
        outcomes = write()
        seq = self.store.cursor()
        stored = frozenset((o.id, o.version) for o in outcomes if isinstance(o, Reservation))
        if seq != before and stored:
            self.feed.written[seq] = stored
        return outcomes


def body(bandwidth: int, **extra: Any) -> dict[str, Any]:
    window = {"start": format_instant(T0 + 100), "end": format_instant(T0 + 200)}
    return {"src": "A", "dst": "B", "bandwidth": bandwidth, **window, **extra}


def widest(service: ReservationService) -> int:
    question = {k: v for k, v in body(0).items() if k != "bandwidth"}
    answer: Mapping[str, Any] = rest(service).availability(
        ALICE, {**question, "mode": "max-bandwidth"}
    )
    return int(answer["max_bandwidth"])


@pytest.fixture
def store() -> MemoryRepository:
    return MemoryRepository()


def replica(store: MemoryRepository, topology: dict[str, Any] | None = None) -> ReservationService:
    repo = Replica(store, FakeFeed())
    service = ReservationService(repo, clock=lambda: T0, feed=repo.feed)
    service.start(topology)
    service.books.mirror.read_every = 3600.0  # the safety read is tested on its own
    rest(service).availability(ALICE, body(1))  # the first catch-up of the epoch reads
    return service


def reads(service: ReservationService) -> int:
    repo = service.books.store
    assert isinstance(repo, Replica)
    return repo.reads


def feed(service: ReservationService) -> FakeFeed:
    repo = service.books.store
    assert isinstance(repo, Replica)
    return repo.feed


def pair(store: MemoryRepository) -> tuple[ReservationService, ReservationService]:
    a = replica(store, LINE)
    b = replica(store)
    return a, b


def test_own_bookings_and_refusals_read_nothing(store: MemoryRepository) -> None:
    a, _ = pair(store)
    before = reads(a)
    rest(a).reserve(ALICE, body(4))
    rest(a).reserve(ALICE, body(4))
    feed(a).hear(store.cursor())  # its own notifications come back
    with pytest.raises(RejectedError):
        rest(a).reserve(ALICE, body(4))
    assert widest(a) == 2
    assert reads(a) == before


def test_a_foreign_booking_is_read_once_when_heard(store: MemoryRepository) -> None:
    a, b = pair(store)
    rest(a).reserve(ALICE, body(6))
    before = reads(b)
    assert widest(b) == 10  # not heard yet: b does not know (the store still would)
    assert reads(b) == before
    feed(b).hear(store.cursor())
    assert widest(b) == 4
    assert widest(b) == 4
    assert reads(b) == before + 1


def test_without_a_listening_feed_every_decision_reads(store: MemoryRepository) -> None:
    a, b = pair(store)
    rest(a).reserve(ALICE, body(6))
    feed(b).stop()
    before = reads(b)
    assert [widest(b) for _ in range(3)] == [4, 4, 4]
    assert reads(b) == before + 3


def test_a_new_epoch_reads_once_whatever_was_heard(store: MemoryRepository) -> None:
    a, b = pair(store)
    rest(a).reserve(ALICE, body(6))  # its notification is lost: b reconnects
    feed(b).epoch += 1
    before = reads(b)
    assert [widest(b) for _ in range(2)] == [4, 4]
    assert reads(b) == before + 1


def test_the_store_is_read_at_least_every_read_every_seconds(store: MemoryRepository) -> None:
    a, b = pair(store)
    rest(a).reserve(ALICE, body(6))
    b.books.mirror.read_every = 0.0
    before = reads(b)
    assert widest(b) == 4  # never heard of, but read all the same
    assert reads(b) == before + 1


def test_a_write_the_store_refuses_is_planned_again_after_a_read(store: MemoryRepository) -> None:
    a, b = pair(store)
    rest(a).reserve(ALICE, body(6))  # b has not heard of it
    before = reads(b)
    with pytest.raises(RejectedError) as refused:
        rest(b).reserve(ALICE, body(6))
    assert "try again" not in str(refused.value)  # a real refusal, not five blind retries
    assert reads(b) == before + 1
    assert rest(b).reserve(ALICE, body(4))["state"] == "reserved"


def test_an_own_change_the_mirror_did_not_learn_is_read(store: MemoryRepository) -> None:
    a, _ = pair(store)
    booked = rest(a).reserve(ALICE, body(6))
    before = reads(a)
    rest(a).cancel(ALICE, booked["id"])  # recorded by the store, not learnt by the mirror
    assert reads(a) == before + 1
    assert widest(a) == 10
