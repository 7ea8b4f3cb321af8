"""An agent's service takes a Prep and a ReqOffers as the values the orchestrator sends:
the hold lasts what the Prep asks, at most the agent's longest hold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest
import yaml

from braid.app.agent.messages import OffersCall, PrepCall
from braid.app.agent.service import AgentService
from braid.app.negotiation.defaults import HOLD_SECONDS, MAX_HOLD_SECONDS
from braid.core.negotiation.domains import MultiDomainNetwork, global_view_from_dict
from braid.core.negotiation.holds import Hold, SegmentAsk
from braid.core.negotiation.result_rules import SwitchPlan

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "fig6a.yaml"
DATA = yaml.safe_load(EXAMPLE.read_text())
FIG6A = MultiDomainNetwork("fig6a", DATA, global_view_from_dict(DATA))
NOW = 1_900_000_000
WINDOW = (NOW + 600, NOW + 4200)
TOKEN = "t" * 20
SPAN = ("re1-west", "re1-east")
G = 10**9


class MemoryStore:
    """Holds kept in memory (the agent's HoldStore port)."""

    def __init__(self) -> None:
        self.holds: dict[str, Hold] = {}

    def write(
        self,
        whole: Sequence[Hold],
        states: Sequence[Hold],
        rules: Mapping[str, Sequence[SwitchPlan]] | None = None,
    ) -> None:
        self.holds.update({h.transaction: h for h in (*whole, *states)})

    def load(self) -> Iterable[Hold]:
        return list(self.holds.values())

    def load_rules(self) -> Iterable[tuple[str, tuple[SwitchPlan, ...]]]:
        return []

    def close(self) -> None:
        pass


def _agent(max_hold_seconds: int = MAX_HOLD_SECONDS) -> AgentService:
    store = MemoryStore()
    return AgentService(FIG6A, "re1", store, max_hold_seconds=max_hold_seconds, clock=lambda: NOW)


def _prep(tx: str, hold_seconds: int) -> PrepCall:
    return PrepCall(tx, TOKEN, WINDOW, (SegmentAsk(*SPAN, G, 0),), hold_seconds, True)


def test_the_longest_hold_is_the_default_one() -> None:
    assert AgentService(FIG6A, "re1", MemoryStore()).max_hold == MAX_HOLD_SECONDS
    assert HOLD_SECONDS <= MAX_HOLD_SECONDS  # what an orchestrator asks by default is kept


@pytest.mark.parametrize(("asked", "kept"), [(HOLD_SECONDS, HOLD_SECONDS), (0, 120), (10**6, 120)])
def test_a_hold_lasts_what_the_prep_asks_at_most_the_longest(asked: int, kept: int) -> None:
    vote = _agent(max_hold_seconds=120).prepare(_prep("tx1", asked))
    assert vote.yes and vote.hold is not None
    assert vote.hold.expires_at == NOW + kept


def test_an_offers_call_is_answered_span_by_span() -> None:
    offers = _agent().offers(OffersCall("tx2", TOKEN, WINDOW, (SPAN, SPAN), True))
    assert len(offers) == 2 and offers[0] == offers[1] > 0
