"""The orchestrator's settings (their defaults in `defaults`)."""

from __future__ import annotations

from dataclasses import dataclass

from braid.app.negotiation.defaults import HOLD_SECONDS, MAX_PATHS, STRATEGY
from braid.core.negotiation.strategies import Strategy

__all__ = ["OrchestratorConfig"]


@dataclass(frozen=True, slots=True)
class OrchestratorConfig:
    strategy: Strategy = STRATEGY
    max_paths: int = MAX_PATHS
    hold_seconds: int = HOLD_SECONDS
    # Prep a guessed split with the offers (NegotiationRun.guess): two rounds, not three,
    # whenever the offers compose that split.
    speculate: bool = True
