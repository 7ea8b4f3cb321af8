"""What a domain agent needs from the outside world: a durable record of its holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from braid.core.negotiation.holds import Hold
from braid.core.negotiation.result_rules import SwitchPlan

__all__ = ["DecisionSource", "HoldStore"]


class HoldStore(Protocol):
    """Every change of a hold is written here before the agent answers, so a restarted
    agent rebuilds exactly the holds and bookings it had promised."""

    def write(
        self,
        whole: Sequence[Hold],
        states: Sequence[Hold],
        rules: Mapping[str, Sequence[SwitchPlan]] | None = None,
    ) -> None:
        """One transaction: new holds whole, only the state of holds already known, and
        the rules Commits brought for this domain's switches (by transaction)."""
        ...

    def load(self) -> Iterable[Hold]: ...

    def load_rules(self) -> Iterable[tuple[str, tuple[SwitchPlan, ...]]]: ...

    def close(self) -> None: ...


class DecisionSource(Protocol):
    """Asks a transaction's coordinator for its decision (a participant that voted yes)."""

    def decision(self, coordinator: str, transaction: str, token: str, domain: str) -> str | None:
        """ "commit", "abort" (decided so, or unknown there: presumed abort), "pending"
        (still collecting votes), or None when the coordinator cannot be reached."""
        ...
