"""Modify (make-before-break) against in-process agents: the old version is released iff the
new one commits, a modify that does not fit changes nothing, and a crash between the new
version's commit and the old one's release is finished by the next orchestrator."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from braid.app.errors import RejectedError
from braid.app.negotiation.modification import Modification
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationResult
from braid.core.errors import InputError
from braid.core.negotiation.holds import HoldState
from braid.core.negotiation.transaction import Transaction
from tests.integration.negotiation.test_negotiator_in_process import (
    FakePool,
    G,
    assert_consistent,
    request,
    world,
)

__all__ = ["world"]  # the fixture, shared with the negotiator's tests


def held(pool: FakePool, tx: str) -> dict[str, HoldState]:
    return {d: h.state for d, s in pool.services.items() for h in s.status() if h.transaction == tx}


def reserved(orchestrator: Orchestrator, gbps: int, paths: int = 1) -> NegotiationResult:
    result = orchestrator.reserve(request("r", gbps, "partial-offers", paths, 0))
    assert result.success, result.reason
    return result


def test_a_modify_commits_the_new_version_and_releases_the_old(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    first = reserved(orchestrator, 3)
    new = orchestrator.modify("r", Modification(bandwidth=5 * G))
    assert new is not None and new.success, new
    assert new.transaction != first.transaction and new.granted == 5 * G
    assert new.request is not None and new.request.bandwidth == 5 * G
    assert set(held(pool, first.transaction).values()) == {HoldState.RELEASED}
    assert set(held(pool, new.transaction).values()) == {HoldState.COMMITTED}
    assert orchestrator.lookup("r") == new  # the reservation is its new version
    assert any("release the old version" in e.text for e in new.trace)
    assert_consistent(orchestrator, pool, [new])
    assert orchestrator.delivery.open_transactions() == []
    gone = orchestrator.cancel("r")  # cancel releases the version that stands
    assert gone is not None and gone.state == "cancelled"
    assert set(held(pool, new.transaction).values()) == {HoldState.RELEASED}


def test_a_modify_that_does_not_fit_changes_nothing(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    first = reserved(orchestrator, 8, paths=1)  # w1's core is 10G; w2 is not a candidate
    before = orchestrator.lookup("r")
    refused = orchestrator.modify("r", Modification(bandwidth=11 * G))  # the old counted free
    assert refused is not None and not refused.success and refused.reason
    assert orchestrator.lookup("r") == before  # the stored outcome is the old version's
    assert set(held(pool, first.transaction).values()) == {HoldState.COMMITTED}
    assert set(held(pool, refused.transaction).values()) <= {HoldState.ABORTED}
    assert_consistent(orchestrator, pool, [first])
    grown = orchestrator.modify("r", Modification(bandwidth=9 * G))  # over the old 8G
    assert grown is not None and grown.success, grown.reason
    assert_consistent(orchestrator, pool, [grown])


def test_a_modify_moves_the_window(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    first = reserved(orchestrator, 8, paths=1)
    assert first.request is not None
    later = Modification(start=first.request.start + 7200, end=first.request.end + 7200)
    new = orchestrator.modify("r", later)
    assert new is not None and new.success, new.reason
    assert new.request is not None and new.request.start == later.start
    (hold,) = [h for h in pool.services["w1"].status() if h.transaction == new.transaction]
    assert (hold.start, hold.end) == (later.start, later.end)
    assert_consistent(orchestrator, pool, [new])


def test_what_cannot_be_modified_is_refused_and_left_alone(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    assert orchestrator.modify("nobody", Modification(bandwidth=G)) is None
    first = reserved(orchestrator, 3)
    with pytest.raises(InputError) as caught:
        orchestrator.modify("r", Modification())
    assert caught.value.field == "body"
    with pytest.raises(InputError):
        orchestrator.modify("r", Modification(max_paths=12))
    orchestrator.cancel("r")
    with pytest.raises(RejectedError, match="cancelled"):
        orchestrator.modify("r", Modification(bandwidth=G))
    assert set(held(pool, first.transaction).values()) == {HoldState.RELEASED}
    assert len({h.transaction for s in pool.services.values() for h in s.status()}) == 1


def test_a_crash_before_the_old_release_is_finished_by_the_next_orchestrator(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    first = reserved(orchestrator, 3)

    def crash(release: Transaction) -> None:
        # The new version is committed everywhere, the old one still booked: both fit.
        assert release.key == f"{first.transaction}/release"
        for service in pool.services.values():
            assert all(p.peak <= p.capacity for p in service.peaks())
        raise SystemExit("killed")

    orchestrator.hooks.before_release = crash
    with pytest.raises(SystemExit):
        orchestrator.modify("r", Modification(bandwidth=4 * G))
    assert set(held(pool, first.transaction).values()) == {HoldState.COMMITTED}
    again = Orchestrator(orchestrator.view, pool, orchestrator.decisions)  # the restart
    assert len(again.delivery.recover()) == 2  # the new commit and the old release
    again.delivery.finish()
    assert again.delivery.open_transactions() == []
    now = again.lookup("r")
    assert now is not None and now.success and now.granted == 4 * G
    assert set(held(pool, first.transaction).values()) == {HoldState.RELEASED}
    assert set(held(pool, now.transaction).values()) == {HoldState.COMMITTED}
    assert_consistent(again, pool, [now])


def test_a_crash_before_the_modify_decides_leaves_the_old_version(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    first = reserved(orchestrator, 3)

    def crash(tx: Transaction) -> None:
        raise SystemExit("killed")

    orchestrator.hooks.before_prep = crash
    with pytest.raises(SystemExit):
        orchestrator.modify("r", Modification(bandwidth=4 * G))
    again = Orchestrator(orchestrator.view, pool, orchestrator.decisions)
    again.delivery.recover()  # never decided: presumed abort
    again.delivery.finish()
    now = again.lookup("r")
    assert now is not None and now.transaction == first.transaction and now.granted == 3 * G
    assert set(held(pool, first.transaction).values()) == {HoldState.COMMITTED}
    assert_consistent(again, pool, [first])


def assert_standing(pool: FakePool, standing: list[NegotiationResult]) -> None:
    """Every domain reached holds exactly the versions that stand; no link is overbooked
    anywhere (a domain that is down may still hold a version it has not heard released)."""
    committed = {r.transaction: {leg.domain for p in r.paths for leg in p.legs} for r in standing}
    for domain, service in pool.services.items():
        for peak in service.peaks():
            assert peak.peak <= peak.capacity, (domain, peak)
        if domain in pool.down:
            continue
        for hold in service.status():
            assert hold.state is not HoldState.HELD, (domain, hold)
            if hold.state is HoldState.COMMITTED:
                assert domain in committed.get(hold.transaction, set()), (domain, hold)
    for tx, domains in committed.items():
        for domain in domains - pool.down:
            assert held(pool, tx)[domain] is HoldState.COMMITTED


operations = st.lists(
    st.one_of(
        st.tuples(st.just("reserve"), st.integers(1, 12), st.integers(1, 2), st.integers(0, 2)),
        st.tuples(st.just("modify"), st.integers(0, 5), st.integers(1, 14), st.integers(0, 2)),
        st.tuples(st.just("cancel"), st.integers(0, 5), st.just(0), st.just(0)),
    ),
    min_size=2,
    max_size=10,
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations, st.lists(st.sampled_from([None, "w1", "w2"]), min_size=10, max_size=10))
def test_any_mix_of_reserve_modify_and_cancel_never_splits_nor_overbooks(
    world: Callable[[], Any], script: list[tuple[str, int, int, int]], outages: list[str | None]
) -> None:
    orchestrator, pool = world()
    made: list[str] = []
    for step, ((op, a, b, c), outage) in enumerate(zip(script, outages, strict=False)):
        pool.down = {outage} if outage else set()
        orchestrator.delivery.finish()  # the finisher: a domain back hears what it missed
        if op == "reserve":
            made.append(f"r{step}")
            orchestrator.reserve(request(f"r{step}", a, "partial-offers", b, c))
        elif made and op == "modify":
            rid = made[a % len(made)]
            before = orchestrator.lookup(rid)
            assert before is not None
            slot = request(rid, 1, "partial-offers", 1, c)
            change = Modification(bandwidth=b * G, start=slot.start, end=slot.end)
            try:
                after = orchestrator.modify(rid, change)
            except RejectedError:  # cancelled or failed: left as it was
                assert before.state != "committed" and orchestrator.lookup(rid) == before
                continue
            assert after is not None
            if not after.success:  # refused: the old version stands as it was
                assert orchestrator.lookup(rid) == before
        elif made and op == "cancel":
            orchestrator.cancel(made[a % len(made)])
        standing = [r for r in map(orchestrator.lookup, made) if r is not None and r.success]
        assert_standing(pool, standing)
    pool.down = set()
    orchestrator.delivery.finish()  # everyone back: every release and commit is heard
    assert orchestrator.delivery.open_transactions() == []
    assert_standing(
        pool, [r for r in map(orchestrator.lookup, made) if r is not None and r.success]
    )


def test_modifies_and_reservations_side_by_side_never_overbook(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    ids = [f"r{i}" for i in range(6)]

    def client(rid: str) -> None:
        if not orchestrator.reserve(request(rid, 3, "partial-offers", 2, 0)).success:
            return  # no room left: nothing to modify
        for gbps in (5, 2, 6):  # the same window: the clients compete for it
            orchestrator.modify(rid, Modification(bandwidth=gbps * G))

    threads = [threading.Thread(target=client, args=(rid,)) for rid in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    standing = [r for r in map(orchestrator.lookup, ids) if r is not None and r.success]
    assert standing  # some fit; none may be booked above the links' capacity
    assert_standing(pool, standing)
    assert orchestrator.delivery.open_transactions() == []
    with pytest.raises(RejectedError, match="being negotiated"):  # one change at a time

        def again(tx: Transaction) -> None:
            orchestrator.modify(standing[0].id, Modification(bandwidth=G))

        orchestrator.hooks.before_prep = again
        orchestrator.modify(standing[0].id, Modification(bandwidth=2 * G))
