"""What the negotiation needs from the outside: calls to domain agents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from braid.core.negotiation.holds import SegmentAsk

T_co = TypeVar("T_co", covariant=True)
Window = tuple[int, int]


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
    def offers(
        self,
        domain: str,
        transaction: str,
        token: str,
        window: Window,
        spans: Sequence[tuple[str, str]],
        symmetric: bool,
    ) -> Pending[list[int]]: ...

    def prepare(
        self,
        domain: str,
        transaction: str,
        token: str,
        window: Window,
        segments: Sequence[SegmentAsk],
        hold_seconds: int,
        symmetric: bool,
    ) -> Pending[PrepReply]: ...

    def commit(self, domain: str, transaction: str, token: str) -> Pending[str]: ...

    def abort(self, domain: str, transaction: str, token: str) -> Pending[str]: ...
