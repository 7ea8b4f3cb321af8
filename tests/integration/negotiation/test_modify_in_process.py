"""Modify (make-before-break) against in-process agents: the old version is released iff the
new one commits, a modify that does not fit changes nothing, and a crash between the new
version's commit and the old one's release is finished by the next orchestrator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

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


def test_a_modify_that_does_not_fit_beside_the_old_changes_nothing(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    first = reserved(orchestrator, 8, paths=1)  # w1's core is 10G; w2 is not a candidate
    before = orchestrator.lookup("r")
    refused = orchestrator.modify("r", Modification(bandwidth=9 * G))
    assert refused is not None and not refused.success and refused.reason
    assert orchestrator.lookup("r") == before  # the stored outcome is the old version's
    assert set(held(pool, first.transaction).values()) == {HoldState.COMMITTED}
    assert set(held(pool, refused.transaction).values()) <= {HoldState.ABORTED}
    assert_consistent(orchestrator, pool, [first])
    smaller = orchestrator.modify("r", Modification(bandwidth=2 * G))  # fits beside 8G
    assert smaller is not None and smaller.success
    assert_consistent(orchestrator, pool, [smaller])


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

    orchestrator.before_release = crash
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

    orchestrator.before_prep = crash
    with pytest.raises(SystemExit):
        orchestrator.modify("r", Modification(bandwidth=4 * G))
    again = Orchestrator(orchestrator.view, pool, orchestrator.decisions)
    again.delivery.recover()  # never decided: presumed abort
    again.delivery.finish()
    now = again.lookup("r")
    assert now is not None and now.transaction == first.transaction and now.granted == 3 * G
    assert set(held(pool, first.transaction).values()) == {HoldState.COMMITTED}
    assert_consistent(again, pool, [first])
