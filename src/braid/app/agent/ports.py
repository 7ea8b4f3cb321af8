"""What a domain agent needs from the outside world: a durable record of its holds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from braid.core.negotiation.holds import Hold

__all__ = ["HoldStore"]


class HoldStore(Protocol):
    """Every change of a hold is written here before the agent answers, so a restarted
    agent rebuilds exactly the holds and bookings it had promised."""

    def write(self, whole: Sequence[Hold], states: Sequence[Hold]) -> None:
        """One transaction: new holds whole, and only the state of holds already known."""
        ...

    def load(self) -> Iterable[Hold]: ...

    def close(self) -> None: ...
