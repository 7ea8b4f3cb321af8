"""The `Repository` contract, run against memory, SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pytest

from braid.app.auth import hash_token
from braid.app.ports import Change, ConflictError, Filters, StateStep, TopologyStep, WriteStep
from braid.app.records import LinkLoad, Reservation, TokenInfo, User
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.planning.lifecycle import BOOKED, State
from tests.integration.store.conftest import Backend
from tests.integration.store.workload import (
    GBIT,
    always,
    book,
    capacity_validator,
    change,
    loads_of,
    reservation,
)


def test_write_then_get_gives_the_reservation_back_with_version_1(repo: Any) -> None:
    res = reservation("r1")
    stored = book(repo, res, now=100)
    assert stored == replace(res, version=1, created_at=100, updated_at=100)
    assert repo.get("r1") == stored
    assert repo.get("missing") is None


def test_big_bandwidths_and_far_times_survive(repo: Any) -> None:
    far = 4_102_444_800  # 2100-01-01, past 2^31 seconds
    two_paths = (
        Allocation(Path(("A", "B"), ("A-B",)), 400 * GBIT),
        Allocation(Path(("A", "X", "B"), ("A-X", "X-B")), 3 * GBIT),
    )
    res = replace(reservation("big", start=far, end=far + 60), allocations=two_paths)
    stored = repo.write(
        Change(res, ()),
        validate=lambda _: [],
        now=far,
        actor="a",
        action="created",
        counting=always,
    )
    assert repo.get("big") == stored
    assert stored.allocations == two_paths
    assert stored.bandwidth == 403 * GBIT


def test_replacing_keeps_the_id_bumps_the_version_and_replaces_loads(repo: Any) -> None:
    book(repo, reservation("r1"), now=100)
    moved = reservation("r1", start=5_000, end=6_000, bandwidth=2 * GBIT)
    stored = book(repo, moved, now=200, action="modified")
    assert stored.version == 2
    assert (stored.created_at, stored.updated_at) == (100, 200)
    assert repo.get("r1") == stored
    assert Counter(load for _, load in repo_loads(repo)) == Counter(loads_of(moved))
    history = [(e.action, e.from_state, e.detail["version"]) for e in repo.audit("r1")]
    assert history == [("created", None, 1), ("modified", "reserved", 2)]


def repo_loads(repo: Any) -> list[tuple[str, LinkLoad]]:
    loads: list[tuple[str, LinkLoad]] = repo.link_loads()
    return loads


def test_expected_version_guards_against_lost_updates(repo: Any) -> None:
    book(repo, reservation("r1"), expected_version=0)
    with pytest.raises(ConflictError, match="version is 1, expected 0"):
        book(repo, reservation("r1"), expected_version=0)
    with pytest.raises(ConflictError, match="expected 5"):
        book(repo, reservation("r1", bandwidth=2 * GBIT), expected_version=5)
    assert repo.get("r1").bandwidth == GBIT
    assert book(repo, reservation("r1"), expected_version=1).version == 2


def test_a_refused_write_changes_nothing(repo: Any) -> None:
    book(repo, reservation("r1"), now=100)
    _, cursor = repo.changes_since(0)
    audit_before = repo.audit()
    for res in (reservation("r1", bandwidth=7 * GBIT), reservation("r2")):
        with pytest.raises(ConflictError) as refused:
            repo.write(
                change(res),
                validate=lambda _: ["link A-B is full"],
                now=200,
                actor="bob",
                action="modified",
                counting=always,
            )
        assert refused.value.problems == ["link A-B is full"]
    assert repo.get("r1").bandwidth == GBIT
    assert repo.get("r2") is None
    assert repo.audit() == audit_before
    assert repo.changes_since(cursor) == ([], cursor)
    assert Counter(load for _, load in repo_loads(repo)) == Counter(loads_of(reservation("r1")))


def test_validate_sees_overlapping_counting_loads_of_others_only(repo: Any) -> None:
    book(repo, reservation("before", start=0, end=1_000))  # ends as r starts: no overlap
    book(repo, reservation("overlap", start=1_500, end=2_500))
    book(repo, reservation("elsewhere", path=Path(("X", "Y"), ("X-Y",))))
    book(repo, reservation("gone"))
    repo.set_state("gone", State.CANCELLED, now=1, actor="a", detail={})
    book(repo, reservation("lapsed", state=State.HELD, hold_expires_at=50))
    book(repo, reservation("r", start=1_000, end=2_000))
    seen: list[Reservation] = []

    def counting(other: Reservation) -> bool:
        seen.append(other)
        return other.hold_expires_at is None  # as if the hold expired by the clock

    given: list[LinkLoad] = []
    mine = reservation("r", start=1_000, end=2_000, bandwidth=2 * GBIT)
    repo.write(
        change(mine),
        validate=lambda loads: _keep(given, loads),
        now=300,
        actor="a",
        action="modified",
        counting=counting,
    )
    assert sorted(r.id for r in seen) == ["lapsed", "overlap"]
    assert {r.id: r.state for r in seen}["lapsed"] == State.HELD
    assert Counter(given) == Counter(loads_of(reservation("overlap", start=1_500, end=2_500)))


def test_writes_without_loads_validate_an_empty_list(repo: Any) -> None:
    calls: list[list[LinkLoad]] = []
    res = reservation("m")
    repo.write(
        Change(res, ()),
        validate=lambda loads: _keep(calls, [list(loads)]),
        now=1,
        actor="op",
        action="maintenance",
        counting=always,
    )
    assert calls == [[]]


def test_a_token_belongs_to_one_reservation(repo: Any) -> None:
    book(repo, reservation("r1"))
    with pytest.raises(ConflictError, match="token"):
        book(repo, replace(reservation("r2"), token="token-r1"))
    assert repo.get("r2") is None


def test_find_filters_by_owner_state_and_overlapping_time(repo: Any) -> None:
    book(repo, reservation("a", start=0, end=100, owner="alice"))
    book(repo, reservation("b", start=100, end=200, owner="bob", state=State.HELD))
    book(repo, reservation("c", start=150, end=300, owner="alice"))
    repo.set_state("c", State.CANCELLED, now=1, actor="alice", detail={})

    def ids(**kw: Any) -> list[str]:
        return [r.id for r in repo.find(Filters(**kw))]

    assert ids() == ["a", "b", "c"]
    assert ids(owner="alice") == ["a", "c"]
    assert ids(states=frozenset({State.HELD, State.RESERVED})) == ["a", "b"]
    assert ids(states=frozenset()) == []
    assert ids(start=100) == ["b", "c"]  # half-open: a ends at 100
    assert ids(end=100) == ["a"]
    assert ids(start=120, end=160) == ["b", "c"]
    assert ids(owner="alice", start=0, end=1_000, limit=1) == ["a"]
    assert repo.find(Filters(owner="bob"))[0].allocations == reservation("b").allocations


def test_booked_lists_held_reserved_and_active(repo: Any) -> None:
    for state in State:
        book(repo, reservation(state.value, state=state, start=len(state.value)))
    assert sorted(r.id for r in repo.booked()) == sorted(s.value for s in BOOKED)
    assert all(r.allocations for r in repo.booked())


def test_set_state_moves_along_the_lifecycle_with_audit(repo: Any) -> None:
    book(repo, reservation("h", state=State.HELD, hold_expires_at=500), now=100)
    _, cursor = repo.changes_since(0)
    moved = repo.set_state("h", State.RESERVED, now=200, actor="bob", detail={"via": "commit"})
    assert (moved.state, moved.version, moved.updated_at) == (State.RESERVED, 2, 200)
    assert repo.get("h") == moved
    last = repo.audit("h")[-1]
    assert (last.action, last.from_state, last.to_state) == ("state", "held", "reserved")
    assert (last.actor, last.at, dict(last.detail)) == ("bob", 200, {"via": "commit"})
    changed, _ = repo.changes_since(cursor)
    assert changed == [moved]


def test_set_state_is_idempotent_and_refuses_lifecycle_violations(repo: Any) -> None:
    book(repo, reservation("r"))
    repo.set_state("r", State.CANCELLED, now=1, actor="a", detail={})
    entries = len(repo.audit())
    again = repo.set_state("r", State.CANCELLED, now=2, actor="a", detail={})
    assert again.version == 2 and len(repo.audit()) == entries
    with pytest.raises(ConflictError, match="cancelled reservation cannot become reserved"):
        repo.set_state("r", State.RESERVED, now=3, actor="a", detail={})
    book(repo, reservation("h", state=State.HELD, hold_expires_at=50))
    with pytest.raises(ConflictError, match="hold expired at 50"):
        repo.set_state("h", State.RESERVED, now=50, actor="a", detail={})
    assert repo.set_state("h", State.EXPIRED, now=50, actor="a", detail={}).state == State.EXPIRED
    with pytest.raises(KeyError):
        repo.set_state("missing", State.CANCELLED, now=3, actor="a", detail={})


def test_audit_keeps_the_newest_entries_oldest_first(repo: Any) -> None:
    for i in range(5):
        book(repo, reservation(f"r{i}"), now=i)
    assert [e.reservation_id for e in repo.audit(limit=2)] == ["r3", "r4"]
    assert [e.at for e in repo.audit()] == [0, 1, 2, 3, 4]
    only = repo.audit("r2")
    assert len(only) == 1 and only[0].to_state == "reserved" and only[0].from_state is None
    assert repo.audit("none") == []


def test_changes_since_returns_each_change_once_in_cursor_order(repo: Any) -> None:
    assert repo.changes_since(0) == ([], 0) and repo.cursor() == 0
    book(repo, reservation("a"))
    book(repo, reservation("b"))
    first, cursor = repo.changes_since(0)
    assert [r.id for r in first] == ["a", "b"]
    assert repo.changes_since(cursor) == ([], cursor)
    repo.set_state("a", State.CANCELLED, now=1, actor="a", detail={})
    book(repo, reservation("c"))
    later, newer = repo.changes_since(cursor)
    assert [(r.id, r.state) for r in later] == [("a", State.CANCELLED), ("c", State.RESERVED)]
    assert newer > cursor
    everything, last = repo.changes_since(0)
    assert [r.id for r in everything] == ["b", "a", "c"]  # a's latest change is newer than b
    assert repo.cursor() == last == newer


def test_topology_versions(repo: Any) -> None:
    assert repo.topology() is None
    one = repo.put_topology({"links": [{"id": "A-B", "capacity": 10 * GBIT}]}, now=1, actor="op")
    two = repo.put_topology({"links": [{"id": "B-C"}], "nodes": ("B", "C")}, now=2, actor="op")
    assert (one.version, two.version) == (1, 2)
    assert repo.topology() == two
    assert two.data == {"links": [{"id": "B-C"}], "nodes": ["B", "C"]}
    assert [e.detail["version"] for e in repo.audit() if e.action == "topology"] == [1, 2]


def test_a_change_planned_on_another_topology_version_is_refused(repo: Any) -> None:
    book(repo, reservation("r0"), topology_version=0)  # no topology stored yet
    repo.put_topology({"links": [{"id": "A-B"}]}, now=1, actor="op")
    book(repo, reservation("r1"), topology_version=1)
    repo.put_topology({"links": [{"id": "A-B"}, {"id": "B-C"}]}, now=2, actor="op")
    _, cursor = repo.changes_since(0)
    entries = len(repo.audit())
    with pytest.raises(ConflictError, match="topology is at version 2, not 1"):
        book(repo, reservation("r2"), topology_version=1)
    with pytest.raises(ConflictError, match="topology is at version 2, not 1"):
        book(repo, reservation("r1", bandwidth=2 * GBIT), topology_version=1)
    assert repo.get("r2") is None and repo.get("r1").bandwidth == GBIT
    assert repo.changes_since(cursor) == ([], cursor) and len(repo.audit()) == entries
    assert book(repo, reservation("r2"), topology_version=2).version == 1
    assert book(repo, reservation("r3")).version == 1  # None: not checked


def test_tokens_name_their_user(repo: Any) -> None:
    h1, h2 = hash_token("secret-1"), hash_token("secret-2")
    assert repo.token(h1) is None
    repo.add_token(h1, User("alice", "user"), now=1)
    repo.add_token(h2, User("alice", "operator"), now=2)
    assert repo.token(h1).role == "operator"  # the role is the user's
    with pytest.raises(ConflictError):
        repo.add_token(h1, User("bob", "user"), now=3)
    assert repo.token(h1) == TokenInfo(h1[:12], "alice", "operator", 1)
    assert all(h1 not in str(e.detail) for e in repo.audit())


def test_state_survives_a_restart(sql_backend: Backend) -> None:
    backend = sql_backend
    first = backend.open()
    book(first, reservation("r1"))
    book(first, reservation("h", state=State.HELD, hold_expires_at=900))
    first.set_state("r1", State.ACTIVE, now=1_000, actor="a", detail={})
    first.put_topology({"links": [{"id": "A-B"}]}, now=1, actor="op")
    first.add_token(hash_token("t1"), User("alice", "user"), now=1, expires_at=50)
    first.revoke_tokens(now=2, actor="op", user="alice")
    before = (
        first.get("r1"),
        first.booked(),
        first.audit(),
        first.changes_since(0),
        first.topology(),
    )
    first.close()

    second = backend.open()
    after = (
        second.get("r1"),
        second.booked(),
        second.audit(),
        second.changes_since(0),
        second.topology(),
    )
    assert after == before
    assert second.token(hash_token("t1")) == TokenInfo(
        hash_token("t1")[:12], "alice", "user", 1, expires_at=50, revoked_at=2
    )
    cursor = before[3][1]
    book(second, reservation("r2", start=5_000, end=6_000))
    assert [r.id for r in second.changes_since(cursor)[0]] == ["r2"]
    with pytest.raises(ConflictError):  # the capacity booked before the restart still counts
        book(second, reservation("r3", bandwidth=9 * GBIT))


def test_capacity_validator_refuses_overbooking(repo: Any) -> None:
    book(repo, reservation("a", bandwidth=6 * GBIT))
    with pytest.raises(ConflictError, match="peak at 11000000000"):
        book(repo, reservation("b", bandwidth=5 * GBIT))
    book(repo, reservation("c", bandwidth=4 * GBIT))
    book(repo, reservation("d", start=2_000, end=3_000, bandwidth=10 * GBIT))  # half-open
    assert capacity_validator(loads_of(reservation("x")))([]) == []


def test_apply_runs_every_step_in_one_transaction(repo: Any) -> None:
    book(repo, reservation("r1"), now=100)
    book(repo, reservation("r2", bandwidth=2 * GBIT), now=100)
    cursor = repo.cursor()
    steps = [
        StateStep("r1", State.FAILED, {"why": "maintenance"}),
        WriteStep(change(reservation("r3", bandwidth=5 * GBIT)), lambda _: [], "created"),
        TopologyStep({"nodes": [{"id": "A"}], "links": []}),
    ]
    done = repo.apply(steps, now=200, actor="ops", counting=always)
    assert [type(x).__name__ for x in done] == ["Reservation", "Reservation", "TopologyVersion"]
    assert repo.get("r1").state == State.FAILED and repo.get("r3") is not None
    changed, _ = repo.changes_since(cursor)
    assert {r.id for r in changed} == {"r1", "r3"}


def test_apply_undoes_every_step_when_one_fails(repo: Any) -> None:
    book(repo, reservation("r1"), now=100)
    before = (repo.get("r1"), repo.cursor(), len(repo.audit()), repo.topology())
    refuse = WriteStep(change(reservation("r4")), lambda _: ["link full"], "created")
    steps = [
        StateStep("r1", State.FAILED, {"why": "maintenance"}),
        TopologyStep({"nodes": [{"id": "A"}], "links": []}),
        WriteStep(change(reservation("r3")), lambda _: [], "created"),
        refuse,
    ]
    with pytest.raises(ConflictError, match="link full"):
        repo.apply(steps, now=200, actor="ops", counting=always)
    assert (repo.get("r1"), repo.cursor(), len(repo.audit()), repo.topology()) == before
    assert repo.get("r3") is None and repo.get("r4") is None
    with pytest.raises(KeyError):
        repo.apply([StateStep("nope", State.FAILED, {})], now=200, actor="ops", counting=always)


def _keep(into: list[Any], items: Iterable[Any]) -> list[str]:
    """A validator that records what it was given and finds no problem."""
    into.extend(items)
    return []
