"""Modifying a volume reservation over the in-memory store: the past kept, the rest re-planned."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from braid.app.errors import PolicyError, RejectedError
from braid.app.ports import Change
from braid.app.records import Reservation, User
from braid.app.reservations.commands import Modify, Reserve
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.app.reservations.volumes import profile_of
from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.policy import Limits, Policy
from braid.core.volume import moved_before
from tests.unit.app.reservations.test_link_state import no_overbooking
from tests.unit.app.reservations.test_service import SQUARE, Clock

T0 = 1_800_000_000
M = 10**6  # bit/s in one Mbit/s
ALICE, BOB = User("alice", "user"), User("bob", "user")


def at(offset: int) -> str:
    return format_instant(T0 + offset) or ""


class RacingRepository(MemoryRepository):
    """A store where another replica's write lands just before the next write of `target`."""

    def __init__(self) -> None:
        super().__init__()
        self.target = ""
        self.meanwhile: Callable[[], object] | None = None

    def write(self, change: Change, **kwargs: Any) -> Reservation:
        if change.reservation.id == self.target and self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
        return super().write(change, **kwargs)


def service_on(
    repo: MemoryRepository, clock: Clock, policy: Policy | None = None
) -> ReservationService:
    service = ReservationService(repo, clock=clock, policy=policy)
    service.start(SQUARE)
    return service


def volume(service: ReservationService, **extra: Any) -> Reservation:
    """125 MB (1000 Mbit) A -> D from T0 + 10: both 10 Mbit/s paths, done at T0 + 60."""
    body = {"mode": "volume", "src": "A", "dst": "D", "volume": "125MB", "not_before": at(10)}
    return service.reserve(ALICE, Reserve.parse({**body, **extra})).record


def modify(service: ReservationService, r: Reservation, **change: Any) -> Reservation:
    return service.modify(ALICE, r.id, Modify.parse(change)).record


def steps(r: Reservation) -> list[tuple[int, int, int]]:
    profile = profile_of(r)
    assert profile is not None
    return [(s.start - T0, s.end - T0, s.rate // M) for s in profile.steps]


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_new_deadline_and_objective_keep_what_moved_and_spread_the_rest(clock: Clock) -> None:
    service = service_on(MemoryRepository(), clock)
    r = volume(service)
    assert steps(r) == [(10, 60, 20)]
    clock.now = T0 + 30  # 400 of the 1000 Mbit have moved
    new = modify(service, r, objective="flattest", deadline=at(130))
    assert steps(new) == [(10, 30, 20), (30, 130, 6)]  # 600 Mbit over 100 s
    assert (new.start, new.end, new.version) == (T0 + 10, T0 + 130, r.version + 1)
    assert new.request["objective"] == "flattest" and new.request["deadline"] == at(130)
    assert new.plan["vlans"] == r.plan["vlans"]  # the paths the step in force uses keep theirs
    entry = service.books.store.audit(r.id)[-1]
    assert entry.action == "modified" and entry.detail["completion"] == T0 + 130
    assert no_overbooking(service) == []


def test_a_bigger_volume_and_a_rate_cap_are_planned_from_now(clock: Clock) -> None:
    service = service_on(MemoryRepository(), clock)
    r = volume(service)
    clock.now = T0 + 30
    new = modify(service, r, volume="250MB", max_rate="5")  # 1600 Mbit more at 5 Mbit/s
    assert steps(new) == [(10, 30, 20), (30, 350, 5)]
    profile = profile_of(new)
    assert profile is not None and profile.bytes == 250 * 10**6
    # What is left free beside the capped rest can be booked by someone else.
    fixed = {
        "src": "A",
        "dst": "D",
        "bandwidth": 15,
        "start": at(30),
        "end": at(300),
        "max_paths": 2,
    }
    service.reserve(BOB, Reserve.parse(fixed))
    assert no_overbooking(service) == []


def test_a_change_that_does_not_fit_says_what_does_and_changes_nothing(clock: Clock) -> None:
    service = service_on(MemoryRepository(), clock)
    r = volume(service, deadline=at(100))
    clock.now = T0 + 30
    before = service.books.store.get(r.id)
    with pytest.raises(RejectedError) as refused:
        modify(service, r, volume="500MB")  # 3600 Mbit more; 70 s at 20 Mbit/s is 1400
    assert "only 225 MB of the 500 MB asked" in refused.value.reason
    assert "(50 MB of it moved already)" in refused.value.reason
    offers = {o["kind"]: o["body"] for o in refused.value.alternatives}
    assert offers == {
        "earliest_completion": {"volume": 500 * 10**6, "deadline": at(210)},
        "most_by_deadline": {"volume": 225 * 10**6},
    }
    assert service.books.store.get(r.id) == before
    for offer in offers.values():  # each offer, sent as it is, fits
        fits = service.modify(ALICE, r.id, Modify.parse(offer)).record
        assert fits.version > r.version
        r = fits
    assert no_overbooking(service) == []


def test_bad_changes_name_the_field_and_change_nothing(clock: Clock) -> None:
    service = service_on(MemoryRepository(), clock)
    r = volume(service)
    fixed = {"src": "A", "dst": "D", "bandwidth": 5, "start": at(100), "end": at(200)}
    other = service.reserve(ALICE, Reserve.parse(fixed)).record
    clock.now = T0 + 30
    for target, change, field in (
        (r, {"volume": "50MB"}, "volume"),  # no more than has moved
        (r, {"deadline": at(20)}, "deadline"),
        (r, {"end": at(300)}, "end"),
        (r, {"bandwidth": 5}, "bandwidth"),
        (r, {"objective": "flattest"}, "deadline"),  # flattest needs a deadline
        (r, {"objective": "soonest"}, "objective"),
        (r, {"max_rate": "fast"}, "max_rate"),
        (r, {"deadline": at(300), "end": at(300)}, "deadline"),
        (other, {"deadline": at(300)}, "deadline"),
    ):
        with pytest.raises(InputError) as bad:
            service.modify(ALICE, target.id, Modify.parse(change))
        assert bad.value.field == field, change
    assert [e.action for e in service.books.store.audit(r.id)] == ["created"]


def test_the_byte_quota_counts_the_new_profile(clock: Clock) -> None:
    policy = Policy(roles={"user": Limits(byte_quota=150 * 10**6)})
    service = service_on(MemoryRepository(), clock, policy)
    r = volume(service)
    clock.now = T0 + 30
    with pytest.raises(PolicyError) as over:
        modify(service, r, volume="200MB")
    assert over.value.rule == "byte_quota"
    assert service.books.store.get(r.id) == r
    assert profile_of(modify(service, r, volume="150MB")) is not None


def test_a_booking_landing_meanwhile_makes_it_plan_again_without_overbooking(
    clock: Clock,
) -> None:
    repo = RacingRepository()
    mine, theirs = service_on(repo, clock), service_on(repo, clock)
    r = volume(mine)
    clock.now = T0 + 30
    # Fits beside the old profile (done at T0 + 60), not beside the first re-plan (6 Mbit/s
    # on A-B-D until T0 + 130): the store refuses that, and the retry plans around it.
    late = {"src": "A", "dst": "D", "bandwidth": 10, "start": at(60), "end": at(200)}
    repo.target = r.id
    repo.meanwhile = lambda: theirs.reserve(BOB, Reserve.parse(late))
    new = modify(mine, r, objective="flattest", deadline=at(130))
    assert repo.meanwhile is None and new.version == r.version + 1
    assert steps(new) == [(10, 30, 20), (30, 60, 6), (60, 130, 6)]
    old, now = profile_of(r), profile_of(new)
    assert old is not None and now is not None
    assert moved_before(now, T0 + 30) == moved_before(old, T0 + 30)
    assert no_overbooking(mine) == []


@st.composite
def fixed_bodies(draw: st.DrawFn) -> dict[str, Any]:
    start = draw(st.integers(0, 300))
    return {
        "src": draw(st.sampled_from("AB")),
        "dst": "D",
        "bandwidth": draw(st.integers(1, 10)),
        "start": at(start),
        "end": at(start + draw(st.integers(10, 300))),
        "max_paths": draw(st.integers(1, 2)),
    }


@st.composite
def volume_changes(draw: st.DrawFn, moved: int, now: int) -> dict[str, Any]:
    """Some of: more bytes than have moved, a deadline after now, a cap, an objective."""
    change: dict[str, Any] = {}
    if draw(st.booleans()):
        change["volume"] = moved + draw(st.integers(1, 200 * 10**6))
    if draw(st.booleans()):
        change["deadline"] = at(now - T0 + draw(st.integers(1, 1000)))
    if draw(st.booleans()):
        change["max_rate"] = draw(st.integers(1, 20))
    if draw(st.booleans()):
        change["objective"] = draw(st.sampled_from(["earliest", "flattest"]))
    return change or {"objective": "earliest"}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.lists(fixed_bodies(), max_size=4), st.data())
def test_a_modification_never_overbooks_keeps_the_past_and_moves_the_new_volume(
    fixed: list[dict[str, Any]], data: Any
) -> None:
    clock = Clock()
    service = service_on(MemoryRepository(), clock)
    for body in fixed:
        with contextlib.suppress(RejectedError):
            service.reserve(BOB, Reserve.parse(body))
    asked = {
        "volume": data.draw(st.integers(10, 200)) * 10**6,
        "not_before": at(data.draw(st.integers(1, 100))),
    }
    try:
        r = volume(service, **asked)
    except RejectedError:
        assume(False)
        raise
    old = profile_of(r)
    assert old is not None
    clock.now = data.draw(st.integers(old.start, old.end - 1), label="now")
    moved = sum(s.bits for s in moved_before(old, clock.now)) // 8
    change = data.draw(volume_changes(moved, clock.now))
    try:
        new = modify(service, r, **change)
    except (RejectedError, InputError) as refused:
        event(f"refused: {type(refused).__name__}")
        assert service.books.store.get(r.id) == r  # nothing changed
        assert no_overbooking(service) == []
        return
    event("modified")
    profile = profile_of(new)
    assert profile is not None
    assert moved_before(profile, clock.now) == moved_before(old, clock.now)
    wanted = change.get("volume", r.request["volume"]) * 8
    assert wanted <= profile.bits < wanted + profile.steps[-1].rate
    assert no_overbooking(service) == []
