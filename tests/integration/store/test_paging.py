"""Listing in pages with a state filter: full pages, none empty, nothing lost or repeated.

States follow from the clock (a reserved booking is active inside its
window), so the store must filter by the state at `now`; a filter applied
after reading would leave pages short, or empty, with more to come.
Run against memory, SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from braid.app.ports import Change
from braid.app.records import User
from braid.app.reservations.service import ReservationService
from braid.core.planning.lifecycle import State, state_at
from tests.integration.store.workload import reservation

# Each example books under an owner of its own, so one store serves them all.
_OWNERS = itertools.count()


@dataclass(frozen=True)
class Booking:
    start: int
    length: int
    state: State
    hold_expires_at: int | None


bookings = st.builds(
    Booking,
    start=st.integers(0, 60),  # few distinct starts: ties on start are common
    length=st.integers(1, 40),
    state=st.sampled_from(State),
    hold_expires_at=st.none() | st.integers(0, 120),
)
wanted_states = st.none() | st.frozensets(st.sampled_from(State), min_size=1)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    found=st.lists(bookings, max_size=14),
    wanted=wanted_states,
    now=st.integers(0, 120),
    limit=st.integers(1, 5),
    operator=st.booleans(),
)
def test_pages_are_the_filtered_list_in_order_and_full_until_the_last(
    repo: Any,
    found: list[Booking],
    wanted: frozenset[State] | None,
    now: int,
    limit: int,
    operator: bool,
) -> None:
    owner = f"owner{next(_OWNERS)}"
    stored = []
    for n, b in enumerate(found):
        record = reservation(
            f"{owner}-{n:02d}",
            start=b.start,
            end=b.start + b.length,
            owner=owner,
            state=b.state,
            hold_expires_at=b.hold_expires_at,
        )
        stored.append(repo.write(Change(record, ()), validate=fits, now=0, actor=owner, action="t"))
    expected = sorted(
        (r for r in stored if wanted is None or state_of(r, now) in wanted),
        key=lambda r: (r.start, r.id),
    )
    service = ReservationService(repo, clock=lambda: now)
    caller = User("olga", "operator") if operator else User(owner, "user")
    query: dict[str, Any] = {"owner": owner, "limit": limit}
    if wanted is not None:
        query["state"] = ",".join(sorted(s.value for s in wanted))

    pages = []
    while True:
        page = service.find(caller, query)
        pages.append(page)
        if page.next is None:
            break
        query["after"] = page.next

    listed = [seen.record.id for page in pages for seen in page.reservations]
    assert listed == [r.id for r in expected]
    assert all(len(p.reservations) == limit for p in pages[:-1])  # `next` set: a full page
    assert pages[-1].reservations or len(pages) == 1  # never an empty page after a full one
    assert all(wanted is None or s.state in wanted for p in pages for s in p.reservations)


def fits(_: object) -> list[str]:
    return []  # nothing to check: these bookings load no links


def state_of(r: Any, now: int) -> State:
    return state_at(r.state, r.start, r.end, now, r.hold_expires_at)
