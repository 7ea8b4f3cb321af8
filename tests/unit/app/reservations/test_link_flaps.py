"""Random bookings, volumes, link flaps and time: never overbooked, nothing lost,
down links avoided from now on.

The checks recompute usage from the stored reservations with the shared
invariant checker (`core.planning.invariants.overbooking`), standbys included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.app.errors import RejectedError
from braid.app.records import Reservation, User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.link_state import set_link_state
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.mirror import as_bookings
from braid.app.reservations.plan_facts import protection_of
from braid.app.reservations.service import ReservationService
from braid.app.reservations.volumes import profile_of
from braid.core.failover.protection import down_links, path_up
from braid.core.model.network import Network
from braid.core.planning.invariants import booking_problems, overbooking
from tests.unit.app.reservations.test_link_state import ALICE, RING, T0, at
from tests.unit.app.reservations.test_service import Clock

OPS = User("ops", "operator")
LINKS = [link["id"] for link in RING["links"]]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("book"), st.integers(1, 8), st.booleans(), st.integers(0, 3)),
        st.tuples(st.just("volume"), st.integers(1, 40), st.integers(0, 3), st.booleans()),
        st.tuples(st.just("flap"), st.sampled_from(LINKS), st.sampled_from(["up", "down"])),
        st.tuples(st.just("wait"), st.integers(1, 60)),
    ),
    min_size=1,
    max_size=25,
)


def check(service: ReservationService, admitted: set[str], now: int) -> None:
    network = Network(service.topology)
    booked = service.books.store.booked()
    for r in booked:
        for booking in as_bookings(r):  # the checker sweeps bookings, not timelines
            network.bookings[booking.id] = booking
            problems = booking_problems(service.topology, booking, r.src, r.dst)
            assert problems == [], problems
    assert overbooking(network) == []
    assert {r.id for r in booked} == admitted  # nothing lost, nothing failed
    down = down_links(service.topology)
    for r in booked:
        if r.end <= now:
            continue  # over: no link state moves it any more
        paths = protection_of(r.plan)
        on_down = any(k in down for k in links_ahead(r, now))
        if paths is not None and path_up(paths.inactive, down) and on_down:
            raise AssertionError(f"{r.id} runs over a down link with its other path up")
        assert on_down == ("degraded" in r.plan), r


def links_ahead(r: Reservation, now: int) -> set[str]:
    """The links `r` crosses from now on: a volume's steps not over yet, or its paths."""
    profile = profile_of(r)
    if profile is None:
        return {k for a in r.allocations for k in a.path.links}
    return {k for s in profile.steps if s.end > now for a in s.allocations for k in a.path.links}


def booked_now(service: ReservationService, body: dict[str, Any]) -> Reservation | None:
    """The reservation `body` makes, never over a down link; None: refused."""
    try:
        record = service.reserve(ALICE, Reserve.parse(body)).record
    except RejectedError:
        return None
    assert not links_ahead(record, service.clock()) & down_links(service.topology)
    return record


@settings(max_examples=60, deadline=None)
@given(steps)
def test_random_flaps_never_overbook_or_lose_anything(script: list[tuple[Any, ...]]) -> None:
    clock = Clock()
    service = ReservationService(MemoryRepository(), clock=clock)
    service.start(RING)
    admitted: set[str] = set()
    for step in script:
        late = clock.now - T0  # the bookings' times count from now
        if step[0] == "book":
            _, bandwidth, protect, offset = step
            body = {
                "src": "A", "dst": "D", "bandwidth": bandwidth, "protect": protect,
                "start": at(late + 10 + 50 * offset), "end": at(late + 200 + 50 * offset),
            }  # fmt: skip
        elif step[0] == "volume":
            _, megabytes, offset, due = step
            body = {
                "mode": "volume", "src": "A", "dst": "D", "volume": f"{megabytes}MB",
                "not_before": at(late + 10 + 50 * offset),
            }  # fmt: skip
            if due:
                body["deadline"] = at(late + 400 + 50 * offset)
        elif step[0] == "flap":
            set_link_state(
                service.books, OPS, step[1], {"state": step[2]}, failback=service.failback
            )
        else:
            clock.now += step[1]
        if step[0] in ("book", "volume"):
            record = booked_now(service, body)
            if record is not None:
                admitted.add(record.id)
        check(service, admitted, clock.now)
