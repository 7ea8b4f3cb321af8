"""What one negotiation needs of the orchestrator running it.

`NegotiationRun` (run) sees the orchestrator (negotiator) only through
`RunContext`: its settings, the agents' pool, the route caches, the decision
log and the delivery of decisions, the fault hooks, and the set of
transactions being negotiated. Both modules import this one, never each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from braid.app.negotiation.caches import RouteCaches
from braid.app.negotiation.config import OrchestratorConfig
from braid.app.negotiation.delivery import Delivery
from braid.app.negotiation.ports import AgentPool, DecisionLog
from braid.core.negotiation.transaction import Transaction

__all__ = ["FaultHooks", "RunContext"]

Hook = Callable[[Transaction], None]


@dataclass(slots=True)
class FaultHooks:
    """Called at the protocol's critical moments, for the fault tests (None: nothing)."""

    # Once a transaction is logged and before its first Prep.
    before_prep: Hook | None = None
    # Once a decision is durable and before anyone hears it.
    after_decide: Hook | None = None
    # Once a modify's new version is committed and before the old version's release leaves.
    before_release: Hook | None = None


class RunContext(Protocol):
    """The orchestrator as one negotiation sees it (read at each use: a setting or a
    view changed meanwhile holds from then on)."""

    @property
    def config(self) -> OrchestratorConfig: ...

    @property
    def agents(self) -> AgentPool: ...

    @property
    def caches(self) -> RouteCaches:
        """The present view's guesses and memos."""
        ...

    @property
    def decisions(self) -> DecisionLog: ...

    @property
    def delivery(self) -> Delivery: ...

    @property
    def hooks(self) -> FaultHooks: ...

    @property
    def clock(self) -> Callable[[], float]:
        """Epoch seconds now (a request that starts in the past is refused)."""
        ...

    def mark_live(self, transaction: str) -> None:
        """A negotiation logged `transaction`: it is being negotiated (not presumed aborted)."""
        ...

    def forget_live(self, transaction: str) -> None:
        """`transaction` was given up before its decision (a wrong guess, aborted)."""
        ...
