"""What the negotiation needs from the outside: calls to domain agents, a durable log."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from braid.app.agent.messages import OffersCall, PrepCall
from braid.core.negotiation.result_rules import SwitchPlan
from braid.core.negotiation.transaction import Transaction

T_co = TypeVar("T_co", covariant=True)
Window = tuple[int, int]
Replaced = tuple[str, str]  # a modify's old version: (transaction, token)


class CallFailedError(Exception):
    """A call to an agent failed: unreachable, timed out, or rejected (with its code)."""

    def __init__(self, domain: str, status: str, error: str, message: str) -> None:
        super().__init__(f"{domain}: {status}{f' {error}' if error else ''}: {message}")
        self.domain = domain
        self.status = status
        self.error = error
        self.message = message

    @property
    def unreachable(self) -> bool:
        return self.status in ("UNAVAILABLE", "DEADLINE_EXCEEDED")


@dataclass(frozen=True, slots=True)
class PrepReply:
    yes: bool
    reason: str = ""
    expires_at: int = 0
    vlans: tuple[tuple[str, int, int], ...] = ()  # (link, vlan, path index)


class Pending(Protocol[T_co]):
    """A call in flight; `result` waits for it and raises CallFailedError."""

    def result(self) -> T_co: ...


class AgentPool(Protocol):
    def together(self) -> AbstractContextManager[None]:
        """Calls made inside leave together when it ends: each agent's in one message
        where the transport batches (a round's calls, or offers and a Prep for one
        agent), the caller's thread handing them over once. Nested, the outer one sends."""
        ...

    def negotiating(self, domains: Collection[str]) -> AbstractContextManager[None]:
        """A negotiation that may call `domains` is under way while it lasts: where the
        transport batches, a batch to one of them may wait a moment for its messages."""
        ...

    def offers(self, domain: str, call: OffersCall) -> Pending[list[int]]:
        """Each of `call.spans`' offer (its `replaces`: a modify's old version, counted as
        free)."""
        ...

    def prepare(self, domain: str, call: PrepCall) -> Pending[PrepReply]:
        """Prepare `call.segments` (its `replaces`: a modify's old version, which the hold
        may share); the pool says where the agent asks for the decision (`coordinator`)."""
        ...

    def commit(
        self, domain: str, transaction: str, token: str, switches: Sequence[SwitchPlan] = ()
    ) -> Pending[str]:
        """Commit; `switches` is the domain's part of the rule plan, for its southbound."""
        ...

    def abort(self, domain: str, transaction: str, token: str) -> Pending[str]: ...

    def release(self, domain: str, transaction: str, token: str) -> Pending[str]: ...


class DecisionLog(Protocol):
    """The orchestrator's durable record of transactions and reservation outcomes.

    A transaction's decision is in it (synced) before any participant hears
    it; on restart every transaction not done is finished from it.
    """

    def save(
        self,
        tx: Transaction,
        *,
        result: dict[str, Any] | None = None,
        durable: bool = True,
        also: Sequence[Transaction] = (),
        later: bool = False,
    ) -> None:
        """Write the transaction (and a reservation's result, and the transactions `also`,
        with it, atomically: a modify's new version and the old one's release);
        `durable` returns only once it is on disk, else once it is written (in the OS's
        hands), or with `later` (never durable) perhaps before: every read afterwards
        sees it all the same."""
        ...

    def unfinished(self) -> list[Transaction]: ...

    def transaction(self, key: str) -> Transaction | None: ...

    def save_result(self, reservation: str, body: dict[str, Any]) -> None: ...

    def result(self, reservation: str) -> dict[str, Any] | None: ...

    def close(self) -> None: ...
