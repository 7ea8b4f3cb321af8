"""The messages of an agent's service: the calls it takes and the answers it gives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.negotiation.holds import Hold, SegmentAsk
from braid.core.negotiation.result_rules import SwitchPlan

__all__ = [
    "MAX_ASK_INTERVAL",
    "AbortCall",
    "AgentCall",
    "AgentError",
    "CommitCall",
    "LinkPeak",
    "OffersCall",
    "Outcome",
    "PrepCall",
    "ReleaseCall",
    "SpanOffer",
    "Vote",
]


class AgentError(InputError):
    """A message the agent rejects; `code` is the proto ErrorCode suffix."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(field, message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Vote:
    yes: bool
    hold: Hold | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class OffersCall:
    """What a ReqOffers asks: an offer for each of `spans` throughout `window`."""

    transaction: str
    token: str
    window: tuple[int, int]
    spans: tuple[tuple[str, str], ...]
    symmetric: bool
    replaces: tuple[str, str] | None = None  # a modify's old (transaction, token)
    over_time: bool = False  # answer each span with its steps over the window too
    also_replaces: tuple[tuple[str, str], ...] = ()  # a volume modify's other old steps


@dataclass(frozen=True, slots=True)
class SpanOffer:
    """A span's offer over time: the whole-window value and its (start, end, bit/s) steps."""

    bandwidth: int
    steps: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True, slots=True)
class PrepCall:
    """What a ReservationPrep asks: hold `segments` throughout `window` for `hold_seconds`
    (the agent keeps it at most its own longest hold)."""

    transaction: str
    token: str
    window: tuple[int, int]
    segments: tuple[SegmentAsk, ...]
    hold_seconds: int
    symmetric: bool
    # Where the agent asks for a decision it missed; the orchestrator's pool sends its own.
    coordinator: str = ""
    replaces: tuple[str, str] | None = None  # a modify's old (transaction, token)
    also_replaces: tuple[tuple[str, str], ...] = ()  # a volume modify's other old steps


@dataclass(frozen=True, slots=True)
class CommitCall:
    transaction: str
    token: str
    # This domain's part of the rule plan, and nothing else (the caller leaves out
    # other domains' plans).
    switches: Sequence[SwitchPlan] = ()


@dataclass(frozen=True, slots=True)
class AbortCall:
    transaction: str
    token: str


@dataclass(frozen=True, slots=True)
class ReleaseCall:
    transaction: str
    token: str


AgentCall = OffersCall | PrepCall | CommitCall | AbortCall | ReleaseCall
# The longest wait between two questions to an unanswering coordinator, seconds.
MAX_ASK_INTERVAL = 30


@dataclass(frozen=True, slots=True)
class Outcome:
    """One message's answer: offers (list[int]), a Vote, (Hold, changed), or its rejection."""

    answer: object
    error: AgentError | None

    def value(self) -> object:
        if self.error is not None:
            raise self.error
        return self.answer


@dataclass(frozen=True, slots=True)
class LinkPeak:
    link: str
    forward: bool
    capacity: int
    peak: int
