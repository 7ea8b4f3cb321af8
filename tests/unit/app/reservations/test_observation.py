"""What /metrics observes: another replica's bookings show as changes not yet applied."""

from __future__ import annotations

from pathlib import Path

from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.observation import observe
from braid.app.reservations.service import ReservationService
from braid.bootstrap.serve import initial_topology

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "science-net.yaml"
NOW = 1_900_000_000


def _replica(store: MemoryRepository) -> ReservationService:
    service = ReservationService(store, clock=lambda: NOW)
    service.start(initial_topology(EXAMPLE, None))
    return service


def _book(service: ReservationService, start: int, hold: bool = False) -> None:
    sent = {"src": "ORNL", "dst": "NERSC", "bandwidth": "10G", "start": start, "end": start + 600}
    service.reserve(User("alice", "user"), Reserve.parse({**sent, "hold": hold}))


def test_a_replica_counts_what_another_wrote_until_it_reads_it() -> None:
    store = MemoryRepository()
    first, second = _replica(store), _replica(store)
    _book(first, NOW + 60)
    assert observe(first.books).changes_behind == 0  # its own write is applied already
    assert observe(second.books).changes_behind == 1
    second.books.mirror.catch_up(NOW, read=True)
    assert observe(second.books).changes_behind == 0


def test_live_reservations_by_state_and_the_first_hold_to_expire() -> None:
    service = _replica(MemoryRepository())
    _book(service, NOW + 60)
    _book(service, NOW + 7200, hold=True)
    seen = observe(service.books)
    assert seen.reservations == {"active": 0, "held": 1, "reserved": 1}
    assert seen.holds == 1 and seen.next_hold_expiry == service.hold_seconds
    peaks = {(load.link, load.direction): load.peak_next_hour for load in seen.links}
    assert max(peaks.values()) > 0 and all(load.now == 0 for load in seen.links)
