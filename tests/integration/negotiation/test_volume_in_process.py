"""A volume across domains against in-process agents: offers over time, one decision
for every step, recovery after a crash before the decision."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from braid.adapters.rpc.volumes import volume_to_proto
from braid.app.agent.messages import PrepCall
from braid.app.errors import RejectedError
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.ports import PrepReply
from braid.app.negotiation.volume import (
    VolumeRequest,
    cancel_volume,
    lookup_volume,
    reserve_volume,
)
from braid.app.negotiation.volume_modify import VolumeChange
from braid.core.errors import InputError
from braid.core.negotiation.holds import HoldState
from braid.core.negotiation.transaction import Decision
from braid.core.rules.enforcement import Policing
from tests.integration.negotiation.test_negotiator_in_process import (
    Done,
    FakePool,
    request,
    world,
)

__all__ = ["world"]  # the fixture, imported for pytest

G = 10**9
ON_W1 = ("site-a", "w1", "site-b")  # w2 is blind: volumes go through w1 alone (10G)


def ask(rid: str, volume_bytes: int, start: int, seconds: int = 1200) -> VolumeRequest:
    return VolumeRequest(
        rid, "site-a", "a-host", "site-b", "b-host", volume_bytes, start, start + seconds
    )


def holds_of(pool: FakePool, tx_prefix: str) -> dict[str, list[Any]]:
    return {
        d: [h for h in s.status() if h.transaction.startswith(tx_prefix)]
        for d, s in pool.services.items()
    }


def test_a_volume_follows_the_free_capacity_and_commits_every_step_everywhere(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    busy = request("bw", 6, "partial-offers", 1, 1)  # 6G on w1 over [start, start + 1200)
    assert orchestrator.reserve(busy).success
    # From 600 s before it: 10G free for 600 s, then 4G. 1 TB = 8000 Gbit:
    # 6000 Gbit in the first 600 s, 2000 Gbit more at 4G takes 500 s.
    outcome = reserve_volume(orchestrator, ask("vol", 10**12, busy.start - 600))
    assert outcome.success, outcome.reason
    assert [(s.start - busy.start, s.end - busy.start, s.rate) for s in outcome.steps] == [
        (-600, 0, 10 * G),
        (0, 500, 4 * G),
    ]
    assert outcome.completion == busy.start + 500
    assert sum(s.bits for s in outcome.steps) == 8 * 10**12
    held = holds_of(pool, outcome.transaction)
    for domain in ON_W1:
        assert sorted((h.start, h.end) for h in held[domain]) == [
            (s.start, s.end) for s in outcome.steps
        ]
        assert all(h.state is HoldState.COMMITTED for h in held[domain])
    assert held["w2"] == []
    for service in pool.services.values():
        assert all(p.peak <= p.capacity for p in service.peaks())


def test_a_refusal_says_the_most_by_the_deadline_and_the_earliest_completion(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    start = int(time.time()) + 60
    # 10G for 100 s is 125 GB; 250 GB would need 200 s.
    outcome = reserve_volume(orchestrator, ask("big", 250 * 10**9, start, seconds=100))
    assert not outcome.success
    assert outcome.most_by_deadline == 125 * 10**9
    assert outcome.earliest_completion == start + 200
    assert "125000000000 of 250000000000 bytes" in outcome.reason
    assert all(hs == [] for hs in holds_of(pool, outcome.transaction).values())


class NoOnStep(FakePool):
    """w1 votes no on the second step of any volume (a sub-transaction ending in .s1)."""

    def prepare(self, domain: str, call: PrepCall) -> Done:
        if domain == "w1" and call.transaction.endswith(".s1"):
            return Done(PrepReply(False, "no, for the test"))
        return super().prepare(domain, call)


def test_one_no_on_one_step_holds_nothing_anywhere(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    assert orchestrator.reserve(request("bw", 6, "partial-offers", 1, 1)).success
    refusing = NoOnStep(pool.services)
    orchestrator.agents = refusing
    orchestrator.delivery.agents = refusing
    outcome = reserve_volume(
        orchestrator, ask("vol", 10**12, request("x", 1, "partial-offers", 1, 1).start - 600)
    )
    assert not outcome.success and "no, for the test" in outcome.reason
    assert len(outcome.transactions) == 2
    assert all(tx.decision is Decision.ABORT for tx in outcome.transactions)
    for holds in holds_of(pool, outcome.transaction).values():
        assert all(h.state is HoldState.ABORTED for h in holds)


class CrashError(Exception):
    pass


def test_a_crash_before_the_decision_aborts_every_step_on_recovery(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    busy = request("bw", 6, "partial-offers", 1, 1)
    assert orchestrator.reserve(busy).success
    log = orchestrator.decisions
    saved = log.save

    def crash_on_decision(tx: Any, **kwargs: Any) -> None:
        if tx.decision is not None and ".s" in tx.id:
            raise CrashError  # the process dies here: nothing of the decision is written
        saved(tx, **kwargs)

    log.save = crash_on_decision
    with pytest.raises(CrashError):
        reserve_volume(orchestrator, ask("vol", 10**12, busy.start - 600))
    log.save = saved
    held = [h for s in pool.services.values() for h in s.status() if ".s" in h.transaction]
    assert len(held) == 6 and all(h.state is HoldState.HELD for h in held)
    restarted = Orchestrator(orchestrator.view, pool, log)
    found = restarted.delivery.recover()
    assert len(found) == 2 and all(tx.decision is Decision.ABORT for tx in found)
    assert restarted.delivery.finish() == 0
    for service in pool.services.values():
        for hold in service.status():
            if ".s" in hold.transaction:
                assert hold.state is HoldState.ABORTED


def test_cancel_releases_every_step_in_every_domain(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    busy = request("bw", 6, "partial-offers", 1, 1)
    assert orchestrator.reserve(busy).success
    outcome = reserve_volume(orchestrator, ask("vol", 10**12, busy.start - 600))
    assert outcome.success
    kept = lookup_volume(orchestrator, "vol")
    assert kept is not None and kept["status"] == "committed"
    assert kept["completion"] == outcome.completion and kept["volume_bytes"] == 10**12
    assert [(s["start"], s["end"]) for s in kept["steps"]] == [
        (s.start, s.end) for s in outcome.steps
    ]
    cancel_volume(orchestrator, outcome)
    for holds in holds_of(pool, outcome.transaction).values():
        assert all(h.state is HoldState.RELEASED for h in holds)
    released = lookup_volume(orchestrator, "vol")
    assert released is not None and released["status"] == "cancelled"


def test_a_volume_id_is_not_a_window_reservation_nor_booked_twice(
    world: Callable[[], Any],
) -> None:
    orchestrator, _ = world()
    start = int(time.time()) + 60
    assert reserve_volume(orchestrator, ask("vol", 10**9, start)).success
    with pytest.raises(InputError) as raised:
        reserve_volume(orchestrator, ask("vol", 10**9, start))
    assert raised.value.field == "id"
    with pytest.raises(RejectedError, match="is a volume reservation"):
        orchestrator.lookup("vol")
    assert lookup_volume(orchestrator, "nothing") is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"volume_bytes": 0}, "volume"),
        ({"deadline": 0}, "deadline"),
        ({"max_rate": 0}, "max_rate"),
        ({"max_paths": 9}, "max_paths"),
    ],
)
def test_bad_input_names_the_field(
    world: Callable[[], Any], change: dict[str, Any], field: str
) -> None:
    orchestrator, _ = world()
    base = ask("v", 10**9, int(time.time()) + 60)
    with pytest.raises(InputError) as raised:
        reserve_volume(orchestrator, replace(base, **change))
    assert raised.value.field == field


def test_a_crash_after_the_decision_commits_every_step_on_recovery(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    busy = request("bw", 6, "partial-offers", 1, 1)
    assert orchestrator.reserve(busy).success

    def die(tx: Any) -> None:
        raise CrashError  # decided and written, nobody told yet

    orchestrator.hooks.after_decide = die
    with pytest.raises(CrashError):
        reserve_volume(orchestrator, ask("vol", 10**12, busy.start - 600))
    restarted = Orchestrator(orchestrator.view, pool, orchestrator.decisions)
    found = restarted.delivery.recover()
    assert len(found) == 2 and all(tx.decision is Decision.COMMIT for tx in found)
    assert restarted.delivery.finish() == 0
    held = [h for s in pool.services.values() for h in s.status() if ".s" in h.transaction]
    assert len(held) == 6 and all(h.state is HoldState.COMMITTED for h in held)
    kept = lookup_volume(restarted, "vol")
    assert kept is not None and kept["status"] == "committed"


def test_a_modify_under_way_keeps_what_moved_and_plans_the_rest_from_now(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    start = int(time.time()) + 60
    hard = replace(ask("vol", 10**12, start), policing=Policing.HARD)
    first = reserve_volume(orchestrator, hard)  # 10G over [0, 800)
    assert first.success and first.completion == start + 800
    # 300 s in (as the orchestrator's clock says): 3000 Gbit = 375 GB have moved.
    orchestrator.clock = lambda: float(start + 300)
    change = VolumeChange(volume_bytes=15 * 10**11, deadline=start + 1300)
    new = orchestrator.modify_volume("vol", change)
    assert new is not None and new.success, new and new.reason
    # 1.125 TB left = 9000 Gbit: 900 s at 10G from now.
    assert [(s.start - start, s.end - start, s.rate) for s in new.steps] == [(300, 1200, 10 * G)]
    body = lookup_volume(orchestrator, "vol")
    assert body is not None and body["status"] == "committed"
    assert body["history"] == [[start, start + 300, 10 * G]]
    assert body["moved_bytes"] == 375 * 10**9 and body["volume_bytes"] == 15 * 10**11
    assert body["completion"] == start + 1200
    assert body["policing"] == "hard" and body["symmetric"]  # as the old version
    shown = volume_to_proto(body).volume.steps  # over gRPC: the kept step first
    assert [(s.start - start, s.end - start, s.rate_bps, s.transaction_id) for s in shown] == [
        (0, 300, 10 * G, ""),
        (300, 1200, 10 * G, new.transactions[0].id),
    ]
    for domain in ON_W1:
        old = holds_of(pool, first.transaction)[domain]
        assert [h.state for h in old] == [HoldState.RELEASED]
        assert [h.state for h in holds_of(pool, new.transaction)[domain]] == [HoldState.COMMITTED]
    with pytest.raises(InputError) as moved:  # less than has moved already
        orchestrator.modify_volume("vol", VolumeChange(volume_bytes=10**11))
    assert moved.value.field == "volume"
    assert orchestrator.modify_volume("nothing", change) is None


def test_a_volume_is_cancelled_or_booked_only_between_its_negotiations(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    start = int(time.time()) + 60
    tried: list[Exception] = []

    def meanwhile(action: Callable[[], Any]) -> Callable[[Any], None]:
        def run(_: Any) -> None:
            with pytest.raises((RejectedError, InputError), match="being negotiated") as caught:
                action()
            tried.append(caught.value)

        return run

    # The same id asked twice at once: the second waits for no one and books nothing.
    orchestrator.hooks.before_prep = meanwhile(
        lambda: orchestrator.reserve_volume(ask("vol", 10**9, start))
    )
    first = orchestrator.reserve_volume(ask("vol", 10**12, start))
    assert first.success
    # A cancel while a modify negotiates: refused, so the new version is not left standing
    # beside a cancel that reported success.
    orchestrator.hooks.before_prep = meanwhile(lambda: orchestrator.cancel_volume("vol"))
    new = orchestrator.modify_volume("vol", VolumeChange(deadline=start + 1300))
    orchestrator.hooks.before_prep = None
    assert new is not None and new.success, new and new.reason
    assert len(tried) == 2
    body = lookup_volume(orchestrator, "vol")
    assert body is not None and body["status"] == "committed"
    cancelled = orchestrator.cancel_volume("vol")
    assert cancelled is not None and cancelled["status"] == "cancelled"
    for holds in holds_of(pool, new.transaction).values():
        assert all(h.state is HoldState.RELEASED for h in holds)
