"""The store's faster paths keep the contract: the lifecycle's own rule, batches, paging.

Run against memory, SQLite and PostgreSQL alike, like test_contract.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from braid.app.ports import ConflictError, Filters, WriteStep
from braid.app.records import LinkLoad
from braid.core.model.paths import Path
from braid.core.planning.lifecycle import State
from tests.integration.store.workload import (
    GBIT,
    book,
    capacity_validator,
    change,
    loads_of,
    reservation,
)

NOW = 1_500


def _seen_without_counting(repo: Any, mine: Any) -> list[LinkLoad]:
    given: list[LinkLoad] = []

    def keep(loads: Any) -> list[str]:
        given.extend(loads)
        return []

    repo.write(
        change(mine),
        validate=keep,
        now=NOW,
        actor="a",
        action="created",
    )
    return given


def test_without_counting_the_store_applies_the_lifecycle_at_now(repo: Any) -> None:
    """Holds count until they expire, bookings until they end, nothing else counts."""
    book(repo, reservation("held", state=State.HELD, hold_expires_at=NOW + 1))
    book(repo, reservation("lapsed", state=State.HELD, hold_expires_at=NOW))
    book(repo, reservation("open-hold", state=State.HELD))
    book(repo, reservation("reserved"))
    book(repo, reservation("active", state=State.ACTIVE, start=500, end=NOW + 10))
    book(repo, reservation("ended", state=State.ACTIVE, start=500, end=NOW))
    book(repo, reservation("cancelled"))
    repo.set_state("cancelled", State.CANCELLED, now=1, actor="a", detail={})
    book(repo, reservation("finished"))
    repo.set_state("finished", State.FINISHED, now=1, actor="a", detail={})
    given = _seen_without_counting(repo, reservation("mine", start=1_000, end=2_000))
    counted = {"held", "open-hold", "reserved", "active"}
    expected = [load for rid in sorted(counted) for load in loads_of(_stored(repo, rid))]
    assert Counter(given) == Counter(expected)


def test_a_confirmed_hold_counts_until_its_end_not_its_old_expiry(repo: Any) -> None:
    held = book(repo, reservation("h", state=State.HELD, hold_expires_at=NOW - 100))
    confirmed = replace(held, state=State.RESERVED, hold_expires_at=None)
    book(repo, confirmed, now=NOW - 200, expected_version=1, action="confirmed")
    given = _seen_without_counting(repo, reservation("mine"))
    assert Counter(given) == Counter(loads_of(confirmed))


def _stored(repo: Any, rid: str) -> Any:
    return repo.get(rid)


def _step(rid: str, bandwidth: int, topology_version: int | None = None) -> WriteStep:
    res = reservation(rid, bandwidth=bandwidth)
    ch = change(res, topology_version)
    return WriteStep(ch, capacity_validator(ch.loads), "created")


def test_a_batch_checks_each_booking_against_the_store_and_the_ones_before(repo: Any) -> None:
    book(repo, reservation("old", bandwidth=4 * GBIT))
    steps = [_step("a", 4 * GBIT), _step("b", 3 * GBIT), _step("c", 2 * GBIT)]
    outcomes = repo.write_new([(s, "alice") for s in steps], now=100)
    assert [type(o).__name__ for o in outcomes] == ["Reservation", "ConflictError", "Reservation"]
    assert outcomes[0] == repo.get("a")
    assert outcomes[2] == repo.get("c")
    assert outcomes[0].version == 1 and outcomes[0].updated_at == 100
    assert repo.get("b") is None
    changed, _ = repo.changes_since(0)
    assert sorted(r.id for r in changed) == ["a", "c", "old"]
    assert [e.action for e in repo.audit("a")] == ["created"]


def test_a_batch_refuses_an_id_twice_and_an_existing_one(repo: Any) -> None:
    book(repo, reservation("old"))
    twice = repo.write_new([(_step("x", GBIT), "a"), (_step("x", GBIT), "a")], now=100)
    assert isinstance(twice[0], type(repo.get("x"))) and isinstance(twice[1], ConflictError)
    with pytest.raises(ConflictError):  # the SQL store refuses the batch as a whole
        outcomes = repo.write_new([(_step("old", GBIT), "a")], now=100)
        raise outcomes[0]
    assert repo.get("old").version == 1


def test_a_batch_planned_on_an_old_topology_writes_nothing(repo: Any) -> None:
    repo.put_topology({"nodes": [], "links": []}, now=1, actor="ops")
    repo.put_topology({"nodes": [], "links": []}, now=2, actor="ops")
    with pytest.raises(ConflictError, match="topology"):
        repo.write_new([(_step("x", GBIT, topology_version=1), "a")], now=100)
    assert repo.get("x") is None


def test_pages_follow_start_then_id_without_gaps_or_repeats(repo: Any) -> None:
    for n in range(7):
        book(repo, reservation(f"r{n}", start=1_000 + (n // 2), end=5_000, bandwidth=GBIT // 10))
    seen: list[str] = []
    after = None
    while True:
        page = repo.find(Filters(limit=3, after=after))
        seen += [r.id for r in page]
        if len(page) < 3:
            break
        after = (page[-1].start, page[-1].id)
    assert seen == [f"r{n}" for n in range(7)]


def test_first_topology_is_stored_once_whoever_asks(repo: Any) -> None:
    first = repo.put_first_topology({"nodes": [{"id": "A"}], "links": []}, now=1, actor="one")
    second = repo.put_first_topology({"nodes": [{"id": "B"}], "links": []}, now=2, actor="two")
    assert first.version == second.version == 1
    assert second.data == first.data and second.actor == "one"
    assert repo.topology_version() == 1


def test_due_lists_what_the_clock_moved_on(repo: Any) -> None:
    book(repo, reservation("hold-gone", state=State.HELD, hold_expires_at=NOW))
    book(repo, reservation("hold-open", state=State.HELD, hold_expires_at=NOW + 1))
    book(repo, reservation("starting", start=NOW, end=NOW + 10))
    book(repo, reservation("later", start=NOW + 1, end=NOW + 10))
    book(repo, reservation("over", state=State.ACTIVE, start=0, end=NOW))
    book(repo, reservation("on", state=State.ACTIVE, start=0, end=NOW + 1, path=_elsewhere()))
    assert sorted(r.id for r in repo.due(NOW)) == ["hold-gone", "over", "starting"]


def _elsewhere() -> Path:
    return Path(("X", "Y"), ("X-Y",))
