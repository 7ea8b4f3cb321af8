"""The service layer over the in-memory fake store: admission, lifecycle, modify, replicas."""

from __future__ import annotations

from typing import Any

import pytest

from braid.app.errors import ForbiddenError, NotFoundError, RejectedError
from braid.app.records import User
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.operations import maintenance, put_topology, tick
from braid.app.reservations.service import ReservationService
from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.model.loads import capacity_lookup, peak_problems
from tests.unit.app.reservations.rest_shape import rest

T0 = 1_800_000_000
ALICE, BOB, OPS = User("alice", "user"), User("bob", "user"), User("ops", "operator")

SQUARE: dict[str, Any] = {
    "nodes": [{"id": n} for n in "ABCD"],
    "links": [
        {"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1},
        {"id": "BD", "a": "B", "b": "D", "capacity": 10, "latency_ms": 1},
        {"id": "AC", "a": "A", "b": "C", "capacity": 10, "latency_ms": 2},
        {"id": "CD", "a": "C", "b": "D", "capacity": 10, "latency_ms": 2},
    ],
}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def at(offset: int) -> str:
    return format_instant(T0 + offset) or ""


def body(bw: object = 6, start: int = 100, end: int = 200, **extra: Any) -> dict[str, Any]:
    return {"src": "A", "dst": "D", "bandwidth": bw, "start": at(start), "end": at(end), **extra}


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make(repo: MemoryRepository, clock: Clock) -> ReservationService:
    service = ReservationService(repo, clock=clock, hold_seconds=60)
    service.start(SQUARE)
    return service


@pytest.fixture
def service(clock: Clock) -> ReservationService:
    return make(MemoryRepository(), clock)


def no_overbooking(service: ReservationService) -> None:
    """Recompute usage from the store's own link loads, not from any timeline."""
    repo = service.books.store
    assert isinstance(repo, MemoryRepository)
    live = {r.id for r in repo.booked()}
    loads = [load for rid, load in repo.link_loads() if rid in live]
    assert peak_problems(loads, capacity_lookup(service.topology)) == []


def test_reserve_books_and_the_next_request_sees_it(service: ReservationService) -> None:
    first = rest(service).reserve(ALICE, body())
    assert first["state"] == "reserved" and first["owner"] == "alice"
    assert [p["nodes"] for p in first["paths"]] == [["A", "B", "D"]]
    assert first["vlans"] == [{"path": 0, "vlan": 1}] and first["token"]
    second = rest(service).reserve(BOB, body())
    assert [p["nodes"] for p in second["paths"]] == [["A", "C", "D"]]
    with pytest.raises(RejectedError) as caught:
        rest(service).reserve(BOB, body())
    kinds = {a["kind"] for a in caught.value.alternatives}
    assert {"earliest_start", "max_bandwidth"} <= kinds
    earliest = next(a for a in caught.value.alternatives if a["kind"] == "earliest_start")
    assert rest(service).reserve(BOB, earliest["body"])["start"] == at(200)
    no_overbooking(service)


def test_bad_input_names_the_field_and_writes_nothing(service: ReservationService) -> None:
    cases = [
        (body(src="Z"), "src"),
        (body(end=50), "end"),
        ({**body(), "start": "2027-01-01T10:00:00"}, "start"),
        (body(bw=0), "bandwidth"),
        (body(start=-10, end=50), "start"),
        (body(colour="red"), "colour"),
        (body(hold="yes"), "hold"),
    ]
    for sent, field in cases:
        with pytest.raises(InputError) as caught:
            rest(service).reserve(ALICE, sent)
        assert caught.value.field == field
    assert isinstance(service.books.store, MemoryRepository)  # the fake is what we think
    assert rest(service).find(OPS, {})["reservations"] == []


def test_users_see_only_their_own(service: ReservationService) -> None:
    mine = rest(service).reserve(ALICE, body())
    with pytest.raises(ForbiddenError):
        rest(service).get(BOB, mine["id"])
    with pytest.raises(ForbiddenError):
        rest(service).cancel(BOB, mine["id"])
    with pytest.raises(NotFoundError):
        rest(service).get(ALICE, "r-nope")
    assert rest(service).find(BOB, {})["reservations"] == []
    assert [r["id"] for r in rest(service).find(OPS, {"owner": "alice"})["reservations"]] == [
        mine["id"]
    ]


def test_cancel_frees_capacity_and_never_comes_back(
    service: ReservationService, clock: Clock
) -> None:
    a = rest(service).reserve(ALICE, body(bw=10))
    rest(service).reserve(ALICE, body(bw=10))
    with pytest.raises(RejectedError):
        rest(service).reserve(BOB, body(bw=10))
    assert rest(service).cancel(ALICE, a["id"])["state"] == "cancelled"
    assert rest(service).reserve(BOB, body(bw=10))["state"] == "reserved"
    restarted = make(service.books.store, clock)  # type: ignore[arg-type]
    with pytest.raises(RejectedError):
        rest(restarted).reserve(BOB, body(bw=10))
    with pytest.raises(InputError):
        rest(service).cancel(ALICE, a["id"])


def test_lifecycle_follows_the_clock_and_is_audited(
    service: ReservationService, clock: Clock
) -> None:
    r = rest(service).reserve(ALICE, body())
    clock.now = T0 + 150
    assert rest(service).get(ALICE, r["id"])["state"] == "active"
    tick(service.books)
    clock.now = T0 + 250
    tick(service.books)
    assert rest(service).get(ALICE, r["id"])["state"] == "finished"
    moves = [(e["from"], e["to"], e["actor"]) for e in rest(service).audit(ALICE, r["id"])]
    assert ("reserved", "active", "system") in moves and ("active", "finished", "system") in moves


def test_holds_expire_and_free_capacity(service: ReservationService, clock: Clock) -> None:
    held = rest(service).reserve(ALICE, body(bw=10, hold=True))
    rest(service).reserve(ALICE, body(bw=10))
    assert held["state"] == "held"
    with pytest.raises(RejectedError):
        rest(service).reserve(BOB, body(bw=10))
    clock.now = T0 + 61
    tick(service.books)
    assert rest(service).get(ALICE, held["id"])["state"] == "expired"
    assert rest(service).reserve(BOB, body(bw=10))["state"] == "reserved"
    with pytest.raises(InputError):
        rest(service).confirm(ALICE, held["id"])


def test_confirm_turns_a_hold_into_a_reservation(service: ReservationService) -> None:
    held = rest(service).reserve(ALICE, body(hold=True))
    assert rest(service).confirm(ALICE, held["id"])["state"] == "reserved"


def test_modify_is_make_before_break(service: ReservationService) -> None:
    r = rest(service).reserve(ALICE, body(bw=6))
    longer = rest(service).modify(ALICE, r["id"], {"end": at(300)})
    assert longer["end"] == at(300) and longer["version"] == r["version"] + 1
    assert longer["paths"] == r["paths"]  # same paths kept
    rest(service).reserve(BOB, body(bw=8, start=250, end=400))
    with pytest.raises(RejectedError):
        rest(service).modify(ALICE, r["id"], {"bandwidth": 11, "end": at(400)})
    unchanged = rest(service).get(ALICE, r["id"])
    assert unchanged["version"] == longer["version"] and unchanged["bandwidth"] == 6
    bigger = rest(service).modify(ALICE, r["id"], {"bandwidth": 9})
    assert bigger["bandwidth"] == 9
    no_overbooking(service)
    with pytest.raises(InputError):
        rest(service).modify(ALICE, r["id"], {"src": "B"})


def test_two_replicas_never_overbook(clock: Clock) -> None:
    repo = MemoryRepository()
    one, two = make(repo, clock), make(repo, clock)
    rest(one).reserve(ALICE, body(bw=10))
    # `two` has not seen it yet, plans on AB-BD, and the store makes it re-plan.
    got = rest(two).reserve(BOB, body(bw=10))
    assert [p["nodes"] for p in got["paths"]] == [["A", "C", "D"]]
    with pytest.raises(RejectedError):
        rest(one).reserve(BOB, body(bw=10))
    no_overbooking(one)


def test_availability_books_nothing(service: ReservationService) -> None:
    answer = rest(service).availability(
        ALICE,
        {
            "mode": "max-bandwidth",
            "src": "A",
            "dst": "D",
            "start": at(100),
            "end": at(200),
            "max_paths": 2,
        },
    )
    assert answer["max_bandwidth"] == 20 and answer["status"] == "answered"
    slots = rest(service).availability(
        ALICE,
        {
            "mode": "all-slots",
            "src": "A",
            "dst": "D",
            "bandwidth": 5,
            "duration": 60,
            "window_start": at(0),
            "window_end": at(600),
        },
    )
    assert slots["slots"] == [[at(0), at(541)]]
    assert rest(service).find(OPS, {})["reservations"] == []


def test_topology_change_reports_misfits(service: ReservationService) -> None:
    r = rest(service).reserve(ALICE, body(bw=8))
    smaller = {
        **SQUARE,
        "links": [
            dict(link, capacity=5) if link["id"] == "AB" else link for link in SQUARE["links"]
        ],
    }
    with pytest.raises(ForbiddenError):
        put_topology(service.books, ALICE, smaller, force=False)
    with pytest.raises(RejectedError) as caught:
        put_topology(service.books, OPS, smaller, force=False)
    assert caught.value.detail["conflicts"][0]["id"] == r["id"]
    assert rest(service).get(ALICE, r["id"])["state"] == "reserved"
    done = put_topology(service.books, OPS, smaller, force=True)
    assert done["version"] == 2 and rest(service).get(ALICE, r["id"])["state"] == "failed"
    assert service.topology.links["AB"].capacity == 5 * 10**6


def test_maintenance_reroutes_around_the_link(service: ReservationService) -> None:
    moved = rest(service).reserve(ALICE, body(bw=4))
    other = rest(service).reserve(ALICE, body(bw=6))
    got = rest(service).maintenance(
        OPS, {"link": "BD", "start": at(0), "end": at(1000), "reason": "fibre"}
    )
    # Both took the fast route A-B-D; both fit on A-C-D.
    assert {r["id"] for r in got["rerouted"]} == {moved["id"], other["id"]} and got["failed"] == []
    for r in (moved, other):
        assert rest(service).get(OPS, r["id"])["paths"][0]["nodes"] == ["A", "C", "D"]
    with pytest.raises(RejectedError):  # BD is out, and the detour B-A-C-D is full
        rest(service).reserve(BOB, {**body(bw=1), "src": "B"})
    no_overbooking(service)


def test_maintenance_fails_what_cannot_move(service: ReservationService) -> None:
    stuck = rest(service).reserve(ALICE, body(bw=6))
    rest(service).reserve(ALICE, body(bw=6))
    got = rest(service).maintenance(OPS, {"node": "B", "start": at(0), "end": at(1000)})
    assert [f["id"] for f in got["failed"]] == [stuck["id"]]
    assert rest(service).get(OPS, stuck["id"])["state"] == "failed"
    with pytest.raises(ForbiddenError):
        maintenance(service.books, ALICE, {"link": "AB", "start": at(0), "end": at(10)})
    with pytest.raises(InputError):
        maintenance(service.books, OPS, {"link": "XY", "start": at(0), "end": at(10)})
    no_overbooking(service)
