"""A link going down under a volume reservation: the rest re-routed, or the volume degraded."""

from __future__ import annotations

from typing import Any

from braid.app.records import Reservation
from braid.app.reservations.commands import Reserve
from braid.app.reservations.link_state import set_link_state
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.app.reservations.volumes import profile_of
from braid.core.volume import Profile, moved_before
from tests.unit.app.reservations.test_link_state import ALICE, OPS, RING, T0, at, no_overbooking
from tests.unit.app.reservations.test_service import Clock

M = 10**6  # bit/s in one Mbit/s


def start(clock: Clock) -> ReservationService:
    service = ReservationService(MemoryRepository(), clock=clock)
    service.start(RING)
    return service


def volume(service: ReservationService, **extra: Any) -> Reservation:
    """125 MB (1000 Mbit) A -> D on one path at 10 Mbit/s: [T0 + 10, T0 + 110)."""
    body = {
        "mode": "volume", "src": "A", "dst": "D", "volume": "125MB",
        "not_before": at(10), "max_paths": 1, **extra,
    }  # fmt: skip
    return service.reserve(ALICE, Reserve.parse(body)).record


def profile(service: ReservationService, r: Reservation) -> Profile:
    stored = service.books.store.get(r.id)
    assert stored is not None
    found = profile_of(stored)
    assert found is not None
    return found


def down(service: ReservationService, link: str, state: str = "down") -> dict[str, str]:
    done = set_link_state(service.books, OPS, link, {"state": state}, failback=True)
    return {m.id: m.action for m in done.moves}


def test_the_rest_of_a_volume_is_rerouted_around_a_down_link() -> None:
    clock = Clock()
    service = start(clock)
    r = volume(service)
    booked = profile(service, r)
    [step] = booked.steps
    assert (step.start, step.end, step.rate) == (T0 + 10, T0 + 110, 10 * M)
    [path] = step.allocations
    clock.now = T0 + 40  # 300 Mbit moved
    assert down(service, path.path.links[0]) == {r.id: "rerouted"}
    moved = profile(service, r)
    assert moved_before(moved, clock.now) == moved_before(booked, clock.now)
    [kept, after] = moved.steps
    assert (kept.start, kept.end, kept.allocations) == (T0 + 10, T0 + 40, step.allocations)
    assert (after.start, after.end, after.rate) == (T0 + 40, T0 + 110, 10 * M)
    assert path.path.links[0] not in after.allocations[0].path.links
    stored = service.books.store.get(r.id)
    assert stored is not None and "degraded" not in stored.plan
    assert [e.action for e in service.books.store.audit(r.id)] == ["created", "rerouted"]
    # The link back up, or one only the past crossed: nothing more to do for it.
    assert r.id not in down(service, path.path.links[0], "up")
    assert no_overbooking(service) == []


def test_a_volume_whose_rest_no_longer_fits_is_degraded_with_what_can_still_move() -> None:
    clock = Clock()
    service = start(clock)
    r = volume(service, deadline=at(115))
    [path] = profile(service, r).steps[0].allocations
    for _ in range(2):  # the two other paths full until T0 + 500
        fixed = {"src": "A", "dst": "D", "bandwidth": 10, "start": at(10), "end": at(500)}
        service.reserve(ALICE, Reserve.parse(fixed))
    clock.now = T0 + 40
    link = path.path.links[0]
    assert down(service, link) == {r.id: "degraded"}
    stored = service.books.store.get(r.id)
    assert stored is not None and profile_of(stored) == profile_of(r)  # kept as booked
    degraded = stored.plan["degraded"]
    assert degraded["links"] == [link] and degraded["since"] == T0 + 40
    assert "only 37.5 MB of the 125 MB asked can be moved" in degraded["why"]
    assert "(37.5 MB of it moved already)" in degraded["why"]
    assert down(service, link, "up") == {r.id: "restored"}
    back = service.books.store.get(r.id)
    assert back is not None and "degraded" not in back.plan
    assert no_overbooking(service) == []
