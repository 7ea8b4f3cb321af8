"""Replicas learn each other's bookings from PostgreSQL's notifications, not a read per decision.

Two `ReservationService`s on two repositories of one database, each with
its repository's `CursorListener`. Store reads are counted by a repository
that counts its `changes_since` calls (the real SQL underneath). Waiting for
a notification polls with a generous deadline: no test depends on speed.
"""

from __future__ import annotations

import runpy
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from braid.adapters.store import SqlRepository, create_engine_from_url, upgrade
from braid.adapters.store.engine import MIGRATIONS
from braid.adapters.store.notify import (
    CHANNEL,
    Connect,
    CursorListener,
    engine_connector,
    start_listening,
)
from braid.app.errors import RejectedError
from braid.app.records import Reservation, User
from braid.app.reservations.service import ReservationService
from tests.unit.app.reservations.rest_shape import rest

TOPOLOGY: dict[str, Any] = {
    "nodes": [{"id": "A"}, {"id": "B"}],
    "links": [{"id": "A-B", "a": "A", "b": "B", "capacity": "10M"}],
}
START = 2_000_000_000  # far ahead of the wall clock the services run on
ALICE = User("alice", "user")
WAIT_S = 30.0


class CountingRepository(SqlRepository):
    """The SQL repository, counting how often the store's changes are read."""

    def __init__(self, url: str) -> None:
        engine = create_engine_from_url(url)
        upgrade(engine)
        super().__init__(engine)
        self.reads = 0

    def changes_since(self, cursor: int) -> tuple[list[Reservation], int]:
        self.reads += 1
        return super().changes_since(cursor)


class Gate:
    """Opens the listener's connections; after the first, only while open."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self.open = threading.Event()
        self.calls = 0

    def connect(self) -> Any:
        self.calls += 1
        if self.calls > 1:
            self.open.wait()
        return self._connect()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.01)


def listener(repo: SqlRepository) -> CursorListener:
    feed = repo.change_feed()
    assert feed is not None
    return feed


def listening(feed: CursorListener, epoch: int = 1) -> bool:
    news = feed.news(0)
    return news is not None and news.epoch >= epoch


def has_heard(feed: CursorListener, cursor: int) -> bool:
    news = feed.news(0)
    return news is not None and news.latest >= cursor


def body(bandwidth: int, minutes: int = 0) -> dict[str, Any]:
    start = START + 3600 * minutes
    return {
        "src": "A",
        "dst": "B",
        "bandwidth": bandwidth,
        "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)),
        "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + 600)),
    }


def started(repo: CountingRepository, topology: dict[str, Any] | None) -> ReservationService:
    service = ReservationService(repo, feed=repo.change_feed())
    service.start(topology)
    # Only notifications, not the once-a-second safety read, in these tests.
    service.books.mirror.read_every = 3600.0
    return service


def widest(service: ReservationService) -> float:
    """The widest booking the service's mirror would offer now, in Mbit/s."""
    question = {k: v for k, v in body(1).items() if k != "bandwidth"}
    answer = rest(service).availability(ALICE, {**question, "mode": "max-bandwidth"})
    return float(answer["max_bandwidth"])


def refused(service: ReservationService, bandwidth: int) -> None:
    with pytest.raises(RejectedError):
        rest(service).reserve(ALICE, body(bandwidth))


@pytest.fixture
def replicas(postgres_url: str) -> Iterator[tuple[ReservationService, ReservationService]]:
    repos = [CountingRepository(postgres_url) for _ in range(2)]
    a = started(repos[0], TOPOLOGY)
    b = started(repos[1], None)
    try:
        for service in (a, b):
            feed = listener_of(service)
            wait_until(partial(listening, feed), "the listeners connect")
            rest(service).availability(ALICE, body(1))  # the first catch-up of the epoch reads
        yield a, b
    finally:
        for service, repo in zip((a, b), repos, strict=True):
            service.stop()
            repo.close()


def reads(service: ReservationService) -> int:
    repo = service.books.store
    assert isinstance(repo, CountingRepository)
    return repo.reads


def test_a_booking_by_one_replica_reaches_the_other_by_notification(
    replicas: tuple[ReservationService, ReservationService],
) -> None:
    a, b = replicas
    first = rest(a).reserve(ALICE, body(6))
    wait_until(lambda: has_heard(listener_of(b), a.books.store.cursor()), "b hears a's booking")
    before = reads(b)
    # A question, not a booking: no store check would catch a stale answer.
    assert widest(b) == 4.0
    assert reads(b) == before + 1
    assert first["id"] in b.books.mirror.network.bookings
    # Nothing new from elsewhere: refusals and b's own bookings read nothing.
    refused(b, 5)
    rest(b).reserve(ALICE, body(3))
    refused(b, 2)
    rest(b).availability(ALICE, body(1))
    assert reads(b) == before + 1


def test_without_a_listener_every_decision_reads_the_store(
    replicas: tuple[ReservationService, ReservationService],
) -> None:
    a, b = replicas
    rest(a).reserve(ALICE, body(6))
    b.stop()
    assert listener_of(b).news(0) is None
    before = reads(b)
    for _ in range(3):
        refused(b, 5)
    assert reads(b) == before + 3


def test_after_a_lost_connection_the_first_decision_reads_once(postgres_url: str) -> None:
    repos = [CountingRepository(postgres_url) for _ in range(2)]
    gate = Gate(engine_connector(repos[1].engine))
    feed = repos[1].change_feed(gate.connect)
    assert feed is not None
    a = started(repos[0], TOPOLOGY)
    b = started(repos[1], None)
    try:
        wait_until(lambda: listening(feed), "b's listener connects")
        rest(b).availability(ALICE, body(1))
        kill(postgres_url, feed.backend_pid)
        wait_until(lambda: feed.news(0) is None, "b's listener notices")
        # Booked while b hears nothing: this notification never reaches b.
        lost = rest(a).reserve(ALICE, body(7))
        gate.open.set()
        wait_until(lambda: listening(feed, epoch=2), "b's listener reconnects")
        before = reads(b)
        assert widest(b) == 3.0
        assert reads(b) == before + 1
        assert lost["id"] in b.books.mirror.network.bookings
        refused(b, 4)
        assert reads(b) == before + 1
    finally:
        gate.open.set()
        for service, repo in zip((a, b), repos, strict=True):
            service.stop()
            repo.close()


def test_the_listener_hears_committed_cursors_of_other_writers(postgres_url: str) -> None:
    repos = [CountingRepository(postgres_url) for _ in range(2)]
    a = ReservationService(repos[0])  # no listener of its own
    a.start(TOPOLOGY)
    feed = listener(repos[1])
    feed.start()
    try:
        wait_until(lambda: listening(feed), "the listener connects")
        for minutes in range(3):
            rest(a).reserve(ALICE, body(2, minutes))
        wait_until(lambda: has_heard(feed, 3), "three cursors heard")
        news = feed.news(0)
        assert news is not None
        assert (news.latest, dict(news.written)) == (repos[0].cursor(), {})
    finally:
        feed.stop()
        for repo in repos:
            repo.close()


def test_sqlite_has_no_feed_and_reads_before_every_decision(tmp_path: Path) -> None:
    repo = CountingRepository(f"sqlite:///{tmp_path / 'braid.db'}")
    try:
        assert repo.change_feed() is None
        service = ReservationService(repo, feed=repo.change_feed())
        service.start(TOPOLOGY)
        before = reads(service)
        for _ in range(3):
            refused(service, 11)
        assert reads(service) == before + 3
    finally:
        repo.close()


def test_the_channel_is_the_migrations_channel() -> None:
    migration = runpy.run_path(str(MIGRATIONS / "versions" / "0003_cursor_notify.py"))
    assert migration["_CHANNEL"] == CHANNEL


def listener_of(service: ReservationService) -> CursorListener:
    feed = service.feed
    assert isinstance(feed, CursorListener)
    return feed


def kill(url: str, pid: int | None) -> None:
    """End a backend as a server restart or network failure would, from outside."""
    assert pid is not None
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        admin.dispose()


def test_braid_sessions_run_without_jit_and_keep_the_callers_options(postgres_url: str) -> None:
    """A generic plan's cost estimate must not make PostgreSQL compile a lookup of a few rows."""
    engine = create_engine_from_url(
        postgres_url, connect_args={"options": "-c statement_timeout=4321"}
    )
    try:
        with engine.connect() as connection:
            assert connection.execute(text("SHOW jit")).scalar_one() == "off"
            assert connection.execute(text("SHOW statement_timeout")).scalar_one() == "4321ms"
    finally:
        engine.dispose()


def test_a_frozen_listener_s_session_is_ended_so_notifications_cannot_pile_up(
    postgres_url: str,
) -> None:
    """A listener that stops pinging (its process frozen) loses its session and its LISTEN."""
    engine = create_engine_from_url(postgres_url)
    frozen = engine_connector(engine)()
    try:
        start_listening(frozen, idle_session_seconds=1)
        pid = frozen.info.backend_pid
        alive = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")

        def sessions() -> int:
            # A new transaction each time: pg_stat_activity is a snapshot within one.
            with engine.connect() as connection:
                return int(connection.execute(alive, {"pid": pid}).scalar_one())

        assert sessions() == 1
        wait_until(lambda: sessions() == 0, "the server ends the idle listening session")
    finally:
        frozen.close()
        engine.dispose()


def test_a_live_listener_pings_and_keeps_its_session_while_notifications_flow(
    postgres_url: str,
) -> None:
    repos = [CountingRepository(postgres_url) for _ in range(2)]
    writer = ReservationService(repos[0])
    writer.start(TOPOLOGY)
    feed = CursorListener(engine_connector(repos[1].engine), idle_session_seconds=6)
    feed.start()
    try:
        wait_until(lambda: listening(feed), "the listener connects")
        pid = feed.backend_pid
        for minutes in range(12):  # a notification about every second, for 12 s
            rest(writer).reserve(ALICE, body(1, minutes))
            time.sleep(1)
        assert listening(feed) and feed.backend_pid == pid
    finally:
        feed.stop()
        for repo in repos:
            repo.close()
