"""The negotiator against in-process agents (a fake pool, real agent services and stores).

Fast enough for Hypothesis: any sequence of reservations, strategies and
agent outages leaves every domain's ledger consistent with the outcomes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.decision_log import SqliteDecisionLog
from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.app.agent.messages import AgentError, OffersCall, PrepCall
from braid.app.agent.service import AgentService
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.ports import CallFailedError, PrepReply
from braid.app.negotiation.results import NegotiationRequest, NegotiationResult
from braid.core.errors import InputError
from braid.core.negotiation.holds import HoldState
from braid.core.negotiation.result_rules import SwitchPlan
from braid.core.negotiation.strategies import STRATEGIES, Strategy
from braid.core.negotiation.transaction import Phase
from tests.integration.negotiation.conftest import SMALL

T = TypeVar("T")
G = 10**9


class Done:
    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        if isinstance(self.value, CallFailedError):
            raise self.value
        return self.value


class FakePool:
    """Calls AgentService objects directly; a domain in `down` is unreachable."""

    def __init__(self, services: dict[str, AgentService]) -> None:
        self.services = services
        self.down: set[str] = set()

    def _run(self, domain: str, call: Callable[[AgentService], T]) -> Done:
        if domain in self.down:
            return Done(CallFailedError(domain, "UNAVAILABLE", "", "down"))
        try:
            return Done(call(self.services[domain]))
        except AgentError as exc:
            return Done(CallFailedError(domain, "FAILED", f"ERROR_CODE_{exc.code}", exc.message))

    def together(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()  # every call is answered at once

    def negotiating(self, domains: Any) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    def offers(self, domain: str, call: OffersCall) -> Done:
        return self._run(domain, lambda s: s.offers(call))

    def prepare(self, domain: str, call: PrepCall) -> Done:
        def prep(s: AgentService) -> PrepReply:
            vote = s.prepare(call)
            vlans = () if vote.hold is None else vote.hold.vlans
            return PrepReply(
                vote.yes, vote.reason, vlans=tuple((v.link, v.vlan, v.path_index) for v in vlans)
            )

        return self._run(domain, prep)

    def commit(self, domain: str, tx: str, token: str, switches: Sequence[SwitchPlan] = ()) -> Done:
        return self._run(domain, lambda s: s.commit(tx, token, switches)[0].state.value)

    def abort(self, domain: str, tx: str, token: str) -> Done:
        return self._run(domain, lambda s: s.abort(tx, token)[0].state.value)

    def release(self, domain: str, tx: str, token: str) -> Done:
        return self._run(domain, lambda s: s.release(tx, token)[0].state.value)


@pytest.fixture
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Any]]:
    made: list[Any] = []

    def make() -> tuple[Orchestrator, FakePool]:
        folder = tmp_path_factory.mktemp("w")
        source = folder / "small.yaml"
        source.write_text(yaml.safe_dump(SMALL))
        domains = load_multidomain(source)
        services = {
            d: AgentService(domains, d, SqliteHoldStore(folder / f"{d}.db"))
            for d in domains.view.domains
        }
        pool = FakePool(services)
        log = SqliteDecisionLog(Path(folder / "o.db"), synchronous="NORMAL")
        made.append(log)
        return Orchestrator(domains.view, pool, log), pool

    yield make
    for log in made:
        log.close()


def request(rid: str, gbps: int, strategy: Strategy, paths: int, slot: int) -> NegotiationRequest:
    start = int(time.time()) + 60 + slot * 600
    return NegotiationRequest(
        rid, "site-a", "a-host", "site-b", "b-host", gbps * G, start, start + 1200,
        strategy, paths,
    )  # fmt: skip


def assert_consistent(o: Orchestrator, pool: FakePool, results: list[NegotiationResult]) -> None:
    committed = {
        r.transaction: {leg.domain for p in r.paths for leg in p.legs} for r in results if r.success
    }
    for domain, service in pool.services.items():
        for hold in service.status():
            assert hold.state is not HoldState.HELD or domain in pool.down, (domain, hold)
            if hold.state is HoldState.COMMITTED:
                assert domain in committed.get(hold.transaction, set()), (domain, hold)
        for peak in service.peaks():
            assert peak.peak <= peak.capacity
    for tx, domains in committed.items():
        for domain in domains - pool.down:
            (hold,) = pool.services[domain].status(tx)
            assert hold.state is HoldState.COMMITTED


reservations = st.lists(
    st.tuples(
        st.integers(1, 14),
        st.sampled_from(STRATEGIES),
        st.integers(1, 2),
        st.integers(0, 3),
        st.sampled_from([None, "w1", "w2", "site-b"]),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(reservations)
def test_any_run_leaves_the_ledgers_consistent(world: Callable[[], Any], script: list[Any]) -> None:
    orchestrator, pool = world()
    results = []
    for i, (gbps, strategy, paths, slot, outage) in enumerate(script):
        pool.down = {outage} if outage else set()
        results.append(orchestrator.reserve(request(f"r{i}", gbps, strategy, paths, slot)))
        assert_consistent(orchestrator, pool, results)
    pool.down = set()
    orchestrator.delivery.finish()  # what the finisher does once everyone is back
    assert orchestrator.delivery.open_transactions() == []
    assert_consistent(orchestrator, pool, results)
    for r in results:
        if r.success:
            assert r.granted == next(
                int(g * G) for i, (g, *_) in enumerate(script) if f"r{i}" == r.id
            )


def test_the_decision_is_durable_before_any_commit(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    seen: list[Phase] = []

    def spy(tx: Any) -> None:
        stored = orchestrator.decisions.transaction(tx.key)
        assert stored is not None and stored.decision is tx.decision
        held = [h for s in pool.services.values() for h in s.status() if h.transaction == tx.id]
        assert held and all(h.state is HoldState.HELD for h in held)
        seen.append(stored.phase)

    orchestrator.hooks.after_decide = spy
    assert orchestrator.reserve(request("r", 3, "partial-offers", 1, 0)).success
    assert seen == [Phase.DECIDED]


def test_an_unknown_end_point_fails_with_the_site_s_reason(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    bad = request("r", 3, "partial-offers", 2, 0)
    result = orchestrator.reserve(
        NegotiationRequest(bad.id, "site-a", "nowhere", "site-b", "b-host", bad.bandwidth,
                           bad.start, bad.end, bad.strategy, bad.max_paths)
    )  # fmt: skip
    assert not result.success
    assert "site-a refused" in result.reason and "'nowhere'" in result.reason
    assert all(not s.status() for s in pool.services.values())  # nothing held, nothing recorded


def test_a_committed_result_carries_its_rule_plan_and_survives_the_log(
    world: Callable[[], Any],
) -> None:
    orchestrator, _ = world()
    result = orchestrator.reserve(request("r", 3, "partial-offers", 1, 0))
    assert result.success and result.switches
    edges = {s.switch: s for s in result.switches}
    assert set(edges) == {"a-edge", "b-edge"}  # no SDX on this network: the edges only
    (vlan,) = {v for link, v in result.paths[0].vlans if link.startswith("a-")}
    assert edges["a-edge"].rules[0].ways[0].vlan == vlan  # pushes the VLAN its link's owner chose
    assert NegotiationResult.from_dict(result.to_dict()) == result
    assert orchestrator.lookup("r") == result


def test_a_kept_rule_plan_is_the_one_a_fresh_orchestrator_makes(
    world: Callable[[], Any],
) -> None:
    orchestrator, _ = world()
    first = orchestrator.reserve(request("r1", 3, "partial-offers", 1, 0))
    again = orchestrator.reserve(request("r2", 3, "partial-offers", 1, 3))  # same VLANs, later
    assert first.paths[0].vlans == again.paths[0].vlans and again.switches == first.switches
    fresh, _ = world()
    assert fresh.reserve(request("r2", 3, "partial-offers", 1, 3)).switches == again.switches
    orchestrator.update_view(orchestrator.view)  # a new view: nothing kept from the old one
    assert orchestrator.caches._plans == {}


def test_a_participant_asking_hears_pending_then_the_decision(world: Callable[[], Any]) -> None:
    orchestrator, _ = world()
    heard: list[str] = []

    def ask(tx: Any) -> None:
        heard.append(orchestrator.decision(tx.id, tx.token, "w1"))

    orchestrator.hooks.before_prep = ask
    orchestrator.hooks.after_decide = ask
    result = orchestrator.reserve(request("r", 3, "partial-offers", 1, 0))
    token = orchestrator.decisions.transaction(result.transaction).token
    assert heard == ["pending", "commit"]
    assert orchestrator.decision(result.transaction, token, "w2") == "abort"  # not a participant
    assert orchestrator.decision("never-seen", token, "w1") == "abort"  # presumed abort
    with pytest.raises(InputError):
        orchestrator.decision(result.transaction, "x" * 20, "w1")
    orchestrator.cancel("r")
    assert orchestrator.decision(result.transaction, token, "w1") == "abort"  # released


def test_a_refused_commit_is_never_reported_committed(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()

    def operator_aborts(tx: Any) -> None:  # w1's operator frees the prepared hold by hand
        pool.services["w1"].abort(tx.id, tx.token)

    orchestrator.hooks.after_decide = operator_aborts
    result = orchestrator.reserve(request("r", 3, "partial-offers", 1, 0))
    assert not result.success and result.state == "failed"
    assert "w1 could not honour the commit" in result.reason
    assert dict(result.holdings) == {
        "site-a": "released", "w1": "refused-commit", "site-b": "released"
    }  # fmt: skip
    assert orchestrator.lookup("r") == result
    assert_consistent(orchestrator, pool, [result])


# -- Preps of a guessed split sent with the offers (NegotiationRun.guess) ------------------


def _prepared_after_composing(result: NegotiationResult) -> list[str]:
    """The domains asked for a Prep once the split was composed (a third round)."""
    phases = [e.phase for e in result.trace]
    composed = phases.index("compose")
    return [e.domain for e in result.trace[composed:] if e.phase == "prep"]


def test_a_route_that_committed_prepares_with_its_offers(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    first = orchestrator.reserve(request("r1", 3, "partial-offers", 2, 0))
    assert first.success and _prepared_after_composing(first) == ["site-a", "w1", "site-b"]
    second = orchestrator.reserve(request("r2", 3, "partial-offers", 2, 1))
    assert second.success and _prepared_after_composing(second) == []  # two rounds
    preps = [e for e in second.trace if e.phase == "prep"]
    assert [e.domain for e in preps] == ["site-a", "w1", "site-b"]
    assert all(e.text.endswith("(asked with the offers)") for e in preps)
    assert [p.bandwidth for p in second.paths] == [3 * G]  # all on the visible WAN, as first
    assert_consistent(orchestrator, pool, [first, second])


def test_a_wrong_guess_is_aborted_and_the_split_prepared_anew(world: Callable[[], Any]) -> None:
    orchestrator, pool = world()
    first = orchestrator.reserve(request("r1", 3, "partial-offers", 2, 0))
    # 8 of w1's 10 Gbit/s taken in slot 2, on another route (so the guess is not told).
    start = request("x", 1, "partial-offers", 1, 2).start
    other = orchestrator.reserve(
        NegotiationRequest("block", "site-a", "a-edge", "site-b", "b-edge", 8 * G,
                           start, start + 1200, "partial-offers", 1)
    )  # fmt: skip
    assert first.success and other.success
    result = orchestrator.reserve(request("r2", 3, "partial-offers", 2, 2))
    assert result.success, result.reason
    assert sorted(p.bandwidth for p in result.paths) == [1 * G, 2 * G]  # w1's 2, blind w2's 1
    assert any(e.phase == "guess" for e in result.trace)
    first_tx = {h.transaction for h in pool.services["site-a"].status()} - {result.transaction}
    guessed = [
        h for s in pool.services.values() for h in s.status()
        if h.transaction in first_tx and h.state is HoldState.ABORTED
    ]  # fmt: skip
    assert guessed, "the guessed Preps were aborted"
    again = orchestrator.reserve(request("r3", 1, "partial-offers", 2, 3))
    assert again.success and _prepared_after_composing(again)  # no guess right after a miss
    assert_consistent(orchestrator, pool, [first, other, result, again])


def test_equal_splitting_asks_every_domain_at_once_on_a_known_route(
    world: Callable[[], Any],
) -> None:
    orchestrator, pool = world()
    first = orchestrator.reserve(request("r1", 4, "equal-split", 2, 0))
    result = orchestrator.reserve(request("r2", 4, "equal-split", 2, 1))
    assert first.success and result.success and _prepared_after_composing(result) == []
    preps = [e for e in result.trace if e.phase == "prep"]
    assert {e.domain for e in preps} == {"site-a", "w1", "w2", "site-b"}
    assert all(e.text.endswith("(asked of every domain at once)") for e in preps)
    assert sorted(p.bandwidth for p in result.paths) == [2 * G, 2 * G]
    assert_consistent(orchestrator, pool, [first, result])


def test_no_guess_when_the_speculation_is_turned_off(world: Callable[[], Any]) -> None:
    orchestrator, _ = world()
    orchestrator.config = replace(orchestrator.config, speculate=False)
    assert orchestrator.reserve(request("r1", 3, "partial-offers", 2, 0)).success
    second = orchestrator.reserve(request("r2", 3, "partial-offers", 2, 1))
    assert second.success and _prepared_after_composing(second) == ["site-a", "w1", "site-b"]
