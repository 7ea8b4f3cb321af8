"""`MemoryConnections`: the connection store in a dict, for tests and a store-less braid."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

from braid.app.nsi.records import Connection
from braid.app.ports import ConflictError

__all__ = ["MemoryConnections"]


class MemoryConnections:
    def __init__(self) -> None:
        self._rows: dict[str, Connection] = {}
        self._lock = threading.Lock()

    def get(self, connection_id: str) -> Connection | None:
        return self._rows.get(connection_id)

    def put(self, connection: Connection) -> Connection:
        with self._lock:
            stored = self._rows.get(connection.id)
            if (stored.version if stored else 0) != connection.version:
                raise ConflictError([f"connection {connection.id} changed meanwhile"])
            kept = replace(connection, version=connection.version + 1)
            self._rows[connection.id] = kept
            return kept

    def all(self) -> Sequence[Connection]:
        return list(self._rows.values())
