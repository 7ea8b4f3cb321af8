"""Random bookings and link flaps: never overbooked, nothing lost, down links avoided.

The checks recompute usage from the stored reservations with the shared
invariant checker (`core.planning.invariants.overbooking`), standbys included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.app.errors import RejectedError
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.link_state import set_link_state
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.mirror import as_booking
from braid.app.reservations.plan_facts import protection_of
from braid.app.reservations.service import ReservationService
from braid.core.failover.protection import down_links, path_up
from braid.core.model.network import Network
from braid.core.planning.invariants import booking_problems, overbooking
from tests.unit.app.reservations.test_link_state import ALICE, RING, T0, at

OPS = User("ops", "operator")
LINKS = [link["id"] for link in RING["links"]]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("book"), st.integers(1, 8), st.booleans(), st.integers(0, 3)),
        st.tuples(st.just("flap"), st.sampled_from(LINKS), st.sampled_from(["up", "down"])),
    ),
    min_size=1,
    max_size=25,
)


def check(service: ReservationService, admitted: set[str]) -> None:
    network = Network(service.topology)
    booked = service.books.store.booked()
    for r in booked:
        network.bookings[r.id] = as_booking(r)  # the checker sweeps bookings, not timelines
        problems = booking_problems(service.topology, as_booking(r), r.src, r.dst)
        assert problems == [], problems
    assert overbooking(network) == []
    assert {r.id for r in booked} == admitted  # nothing lost, nothing failed
    down = down_links(service.topology)
    for r in booked:
        paths = protection_of(r.plan)
        on_down = not all(path_up(a.path, down) for a in r.allocations)
        if paths is not None and path_up(paths.inactive, down) and on_down:
            raise AssertionError(f"{r.id} runs over a down link with its other path up")
        assert on_down == ("degraded" in r.plan), r


@settings(max_examples=60, deadline=None)
@given(steps)
def test_random_flaps_never_overbook_or_lose_anything(script: list[tuple[Any, ...]]) -> None:
    service = ReservationService(MemoryRepository(), clock=lambda: T0)
    service.start(RING)
    admitted: set[str] = set()
    for step in script:
        if step[0] == "book":
            _, bandwidth, protect, offset = step
            body = {
                "src": "A", "dst": "D", "bandwidth": bandwidth, "protect": protect,
                "start": at(10 + 50 * offset), "end": at(200 + 50 * offset),
            }  # fmt: skip
            try:
                seen = service.reserve(ALICE, Reserve.parse(body))
            except RejectedError:
                continue
            down = down_links(service.topology)
            assert all(path_up(a.path, down) for a in seen.record.allocations)
            admitted.add(seen.record.id)
        else:
            set_link_state(
                service.books, OPS, step[1], {"state": step[2]}, failback=service.failback
            )
        check(service, admitted)
