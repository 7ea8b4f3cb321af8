"""Protected reservations and link state in the service, over the in-memory store."""

from __future__ import annotations

from typing import Any

import pytest

from braid.app.errors import ForbiddenError, RejectedError
from braid.app.records import Reservation, User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.link_state import set_link_state
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.plan_facts import protection_of
from braid.app.reservations.service import ReservationService
from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.model.loads import capacity_lookup, peak_problems

T0 = 1_800_000_000
ALICE, OPS, WATCH = User("alice", "user"), User("ops", "operator"), User("mon", "monitor")

# A ring of four: A-B-D (short) and A-C-D (long), and a long spur A-E-D.
RING: dict[str, Any] = {
    "nodes": [{"id": n} for n in "ABCDE"],
    "links": [
        {"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1},
        {"id": "BD", "a": "B", "b": "D", "capacity": 10, "latency_ms": 1},
        {"id": "AC", "a": "A", "b": "C", "capacity": 10, "latency_ms": 2},
        {"id": "CD", "a": "C", "b": "D", "capacity": 10, "latency_ms": 2},
        {"id": "AE", "a": "A", "b": "E", "capacity": 10, "latency_ms": 5},
        {"id": "ED", "a": "E", "b": "D", "capacity": 10, "latency_ms": 5},
    ],
}


def at(offset: int) -> str:
    return format_instant(T0 + offset) or ""


def body(bw: object = 6, **extra: Any) -> dict[str, Any]:
    return {"src": "A", "dst": "D", "bandwidth": bw, "start": at(10), "end": at(500), **extra}


@pytest.fixture
def service() -> ReservationService:
    service = ReservationService(MemoryRepository(), clock=lambda: T0)
    service.start(RING)
    return service


def book(service: ReservationService, **extra: Any) -> Reservation:
    return service.reserve(ALICE, Reserve.parse(body(**extra))).record


def links_of(r: Reservation) -> list[str]:
    return [k for a in r.allocations for k in a.path.links]


def no_overbooking(service: ReservationService) -> list[str]:
    """Every booked reservation's stored loads, summed from scratch against capacity."""
    repo = service.books.store
    assert isinstance(repo, MemoryRepository)
    booked = {r.id for r in repo.booked()}
    mine = [load for rid, load in repo.link_loads() if rid in booked]
    return peak_problems(mine, capacity_lookup(service.topology))


def test_a_protected_booking_books_a_disjoint_standby_exclusively(
    service: ReservationService,
) -> None:
    r = book(service, protect=True)
    paths = protection_of(r.plan)
    assert paths is not None and not paths.on_standby
    assert paths.primary.links == ("AB", "BD") and paths.standby.links == ("AC", "CD")
    assert r.plan["protection"]["shared_links"] == []
    assert len(r.plan["vlans"]) == 2 and len(r.plan["group_ids"]) == 4
    # Both paths hold 6 of 10: a second protected 6 takes the spur and the primary is full.
    second = book(service, protect=True, bandwidth=4)
    assert protection_of(second.plan) is not None
    with pytest.raises(RejectedError):
        book(service, protect=True, bandwidth=6)
    assert no_overbooking(service) == []


def test_link_down_moves_to_the_standby_and_back(service: ReservationService) -> None:
    r = book(service, protect=True)
    done = set_link_state(service.books, WATCH, "BD", {"state": "down"}, failback=service.failback)
    assert done.changed and [m.action for m in done.moves] == ["failover"]
    moved = service.books.store.get(r.id)
    assert moved is not None and links_of(moved) == ["AC", "CD"]
    assert service.topology.links["BD"].up is False
    # While BD is down, nothing new is planned over it.
    other = book(service, bandwidth=4)
    assert "BD" not in links_of(other)
    back = set_link_state(service.books, OPS, "BD", {"state": "up"}, failback=service.failback)
    assert [m.action for m in back.moves] == ["failback"]
    restored = service.books.store.get(r.id)
    assert restored is not None and links_of(restored) == ["AB", "BD"]
    actions = [e.action for e in service.books.store.audit(r.id)]
    assert actions == ["created", "failover", "failback"]
    assert no_overbooking(service) == []


def test_without_failback_it_stays_on_the_standby() -> None:
    service = ReservationService(MemoryRepository(), clock=lambda: T0, failback=False)
    service.start(RING)
    r = book(service, protect=True)
    set_link_state(service.books, OPS, "AB", {"state": "down"}, failback=service.failback)
    set_link_state(service.books, OPS, "AB", {"state": "up"}, failback=service.failback)
    stayed = service.books.store.get(r.id)
    assert stayed is not None and links_of(stayed) == ["AC", "CD"]


def test_unprotected_are_rerouted_or_marked_degraded(service: ReservationService) -> None:
    first = book(service)  # AB-BD
    second = book(service, bandwidth=4)  # AB-BD too (room for 4)
    blocker = book(service, bandwidth=10)  # AC-CD full
    assert links_of(blocker) == ["AC", "CD"]
    done = set_link_state(service.books, OPS, "AB", {"state": "down"}, failback=service.failback)
    outcome = {m.id: m.action for m in done.moves}
    # The spur (10) takes both (6 + 4).
    assert outcome == {first.id: "rerouted", second.id: "rerouted"}
    set_link_state(service.books, OPS, "AE", {"state": "down"}, failback=service.failback)
    gone = {r.id: r for r in service.books.store.booked()}
    assert "degraded" in gone[first.id].plan and "degraded" in gone[second.id].plan
    up = set_link_state(service.books, OPS, "AE", {"state": "up"}, failback=service.failback)
    assert {m.action for m in up.moves} == {"restored"}
    assert no_overbooking(service) == []


def test_bad_input_names_the_field_and_changes_nothing(service: ReservationService) -> None:
    before = service.books.store.topology_version()
    with pytest.raises(InputError) as bad_link:
        set_link_state(service.books, OPS, "XX", {"state": "down"}, failback=service.failback)
    assert bad_link.value.field == "link"
    with pytest.raises(InputError) as bad_state:
        set_link_state(service.books, OPS, "AB", {"state": "sideways"}, failback=service.failback)
    assert bad_state.value.field == "state"
    with pytest.raises(ForbiddenError):
        set_link_state(service.books, ALICE, "AB", {"state": "down"}, failback=service.failback)
    with pytest.raises(InputError) as bad_protect:
        book(service, protect="yes")
    assert bad_protect.value.field == "protect"
    with pytest.raises(InputError) as split:
        book(service, protect=True, max_paths=2)
    assert split.value.field == "protect"
    assert service.books.store.topology_version() == before
    assert service.books.store.booked() == []


def test_setting_the_same_state_twice_writes_nothing(service: ReservationService) -> None:
    set_link_state(service.books, OPS, "AB", {"state": "down"}, failback=service.failback)
    version = service.books.store.topology_version()
    again = set_link_state(service.books, OPS, "AB", {"state": "down"}, failback=service.failback)
    assert not again.changed and service.books.store.topology_version() == version
