"""What the NSI provider needs from outside: a store of connections, a courier to requesters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from braid.app.nsi.messages import Outgoing
from braid.app.nsi.records import Connection

__all__ = ["ConnectionStore", "Courier"]


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
