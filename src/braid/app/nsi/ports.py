"""What NSI needs from outside: for braid as a provider, a store of connections and a
courier to requesters; for braid as a requester, a client of a provider and a book of
the connections it made there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from braid.app.nsi.messages import Criteria, Outgoing, Summary
from braid.app.nsi.records import Connection
from braid.core.nsi.peer import NsiPeer

__all__ = ["ConnectionBook", "ConnectionStore", "Courier", "NsiProvider", "ProviderError"]


class ConnectionStore(Protocol):
    def get(self, connection_id: str) -> Connection | None: ...

    def put(self, connection: Connection) -> Connection:
        """Store `connection` if the stored one has `connection.version` (or none is stored
        and it is 0); returns it with the next version. Raises ConflictError otherwise."""
        ...

    def all(self) -> Sequence[Connection]: ...


class Courier(Protocol):
    def send(self, outgoing: Outgoing) -> None:
        """Deliver to the requester (best effort; a requester that is gone is logged)."""
        ...


class ProviderError(Exception):
    """A request to an NSI provider failed: not reached (`reached` False), or refused with
    NSI's `error_id` (a SOAP fault's serviceException)."""

    def __init__(self, text: str, *, reached: bool, error_id: str = "") -> None:
        super().__init__(text)
        self.text = text
        self.reached = reached
        self.error_id = error_id


class NsiProvider(Protocol):
    """Requests to one NSI provider, each answered synchronously (the provider's
    acknowledgment); raises ProviderError."""

    def reserve(self, peer: NsiPeer, global_id: str, criteria: Criteria) -> str:
        """Ask for a new reservation; returns the connection id the provider gave it."""
        ...

    def request(self, peer: NsiPeer, operation: str, connection_id: str) -> None:
        """reserveCommit, reserveAbort or terminate: accepted (the outcome comes later)."""
        ...

    def summaries(self, peer: NsiPeer, connection_ids: Sequence[str] = ()) -> list[Summary]:
        """querySummarySync: those connections, or every one of braid's there (none given)."""
        ...


class ConnectionBook(Protocol):
    """The NSI connections braid made for each transaction, kept across restarts: a
    restarted orchestrator aborts, commits or terminates them by id."""

    def add(self, transaction: str, domain: str, connection_id: str) -> None:
        """Record (durably, before the vote leaves) one connection of `transaction`."""
        ...

    def connections(self, transaction: str, domain: str) -> list[str]: ...
