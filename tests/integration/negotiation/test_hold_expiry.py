"""An agent's holds end at `min(asked, max_hold)` whoever asked, and a Commit needs the
coordinator's commit decision (in process, with a clock and coordinators of our own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import yaml

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.app.agent.messages import AgentCall, CommitCall, OffersCall, PrepCall
from braid.app.agent.service import AgentService
from braid.core.negotiation.holds import Hold, HoldState, SegmentAsk
from tests.integration.negotiation.conftest import SMALL

G = 10**9
T0 = 2_000_000_000
TOKEN = "t" * 20


class Coordinators:
    """What each transaction's coordinator answers (None: nobody answers)."""

    def __init__(self) -> None:
        self.answers: dict[str, str | None] = {}
        self.asked: list[str] = []

    def decision(self, coordinator: str, transaction: str, token: str, domain: str) -> str | None:
        self.asked.append(transaction)
        return self.answers.get(transaction)


class Clock:
    def __init__(self) -> None:
        self.now = float(T0)

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[tuple[AgentService, Clock, Coordinators]]:
    source = tmp_path / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    clock, coordinators = Clock(), Coordinators()
    service = AgentService(
        load_multidomain(source),
        "w1",
        SqliteHoldStore(tmp_path / "w1.db", synchronous="NORMAL"),
        max_hold_seconds=300,
        clock=clock,
        decisions=coordinators,
    )
    yield service, clock, coordinators
    service.store.close()


def prep(tx: str, hold_seconds: int, coordinator: str = "") -> PrepCall:
    segment = SegmentAsk("w1-x", "w1-y", 4 * G, 0)
    window = (T0 + 600, T0 + 1200)
    return PrepCall(tx, TOKEN, window, (segment,), hold_seconds, True, coordinator)


def one(service: AgentService, call: AgentCall) -> object:
    return service.exchange([call])[0].value()


def settled(service: AgentService, call: AgentCall) -> tuple[Hold, bool]:
    return cast(tuple[Hold, bool], one(service, call))


def state(service: AgentService, tx: str) -> HoldState:
    return service.book.holds[tx].state


def free(service: AgentService) -> int:
    call = OffersCall("q", TOKEN, (T0 + 600, T0 + 1200), (("w1-x", "w1-y"),), True)
    return service.offers(call)[0]


def test_a_short_hold_without_a_coordinator_is_freed_when_its_time_is_up(
    agent: tuple[AgentService, Clock, Coordinators],
) -> None:
    service, clock, _ = agent
    one(service, prep("stranger", 2))
    assert free(service) == 6 * G
    clock.now += 1
    service.resolve_overdue()
    assert state(service, "stranger") is HoldState.HELD
    clock.now += 2
    expired = service.resolve_overdue()
    assert [h.transaction for h in expired] == ["stranger"]
    assert state(service, "stranger") is HoldState.EXPIRED
    assert free(service) == 10 * G
    # ... and written so: a restarted agent does not bring it back.
    assert {h.transaction: h.state for h in service.store.load()}["stranger"] is HoldState.EXPIRED


def test_a_hold_asked_for_longer_than_max_hold_ends_at_max_hold(
    agent: tuple[AgentService, Clock, Coordinators],
) -> None:
    service, clock, _ = agent
    one(service, prep("greedy", 100_000))
    assert service.book.holds["greedy"].expires_at == T0 + 300
    clock.now += 301
    service.resolve_overdue()
    assert service.book.holds["greedy"].state is HoldState.EXPIRED


def test_a_commit_after_the_hold_time_is_refused(
    agent: tuple[AgentService, Clock, Coordinators],
) -> None:
    service, clock, _ = agent
    one(service, prep("late", 2))
    clock.now += 3  # not swept yet: the Commit itself sees the time is up
    outcome = service.exchange([CommitCall("late", TOKEN)])[0]
    assert outcome.error is not None and outcome.error.code == "CONFLICT"
    assert "expired" in str(outcome.error)
    assert service.book.holds["late"].state is HoldState.HELD  # the sweep frees it


@pytest.mark.parametrize(
    ("answer", "said", "code"),
    [
        (None, "did not answer", "UNDECIDED"),  # may come again: the finisher retries
        ("pending", "answered pending", "UNDECIDED"),
        ("abort", "answered abort", "CONFLICT"),
    ],
)
def test_a_commit_without_the_coordinators_commit_decision_is_refused(
    agent: tuple[AgentService, Clock, Coordinators], answer: str | None, said: str, code: str
) -> None:
    service, _, coordinators = agent
    one(service, prep("tx", 60, "127.0.0.1:9"))
    coordinators.answers["tx"] = answer
    outcome = service.exchange([CommitCall("tx", TOKEN)])[0]
    assert outcome.error is not None and outcome.error.code == code
    assert f"coordinator 127.0.0.1:9 has no commit decision for transaction 'tx' ({said})" in str(
        outcome.error
    )
    assert service.book.holds["tx"].state is HoldState.HELD
    assert coordinators.asked == ["tx"]


def test_a_commit_with_the_coordinators_commit_decision_commits(
    agent: tuple[AgentService, Clock, Coordinators],
) -> None:
    service, _, coordinators = agent
    one(service, prep("tx", 60, "127.0.0.1:9"))
    coordinators.answers["tx"] = "commit"
    hold, changed = settled(service, CommitCall("tx", TOKEN))
    assert changed and hold.state is HoldState.COMMITTED
    # A repeat is idempotent and needs no question.
    assert settled(service, CommitCall("tx", TOKEN))[1] is False
    assert coordinators.asked == ["tx"]


def test_a_prep_and_its_commit_in_one_batch_commit_nothing(
    agent: tuple[AgentService, Clock, Coordinators],
) -> None:
    service, _, coordinators = agent
    coordinators.answers["tx"] = "commit"
    vote, commit = service.exchange([prep("tx", 60, "127.0.0.1:9"), CommitCall("tx", TOKEN)])
    assert vote.error is None
    assert commit.error is not None and "was not asked" in str(commit.error)
    assert service.book.holds["tx"].state is HoldState.HELD


def test_a_commit_with_a_wrong_token_asks_nobody(
    agent: tuple[AgentService, Clock, Coordinators],
) -> None:
    service, _, coordinators = agent
    one(service, prep("tx", 60, "127.0.0.1:9"))
    outcome = service.exchange([CommitCall("tx", "u" * 20)])[0]
    assert outcome.error is not None and outcome.error.code == "BAD_TOKEN"
    assert coordinators.asked == []
