"""Delivery audit entries kept in memory, for a `braid serve` without a database and tests."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from braid.app.records import AuditEntry

__all__ = ["MemoryDeliveryAudit"]


class MemoryDeliveryAudit:
    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []
        self._lock = threading.Lock()

    def degraded(
        self, reservation_id: str, detail: Mapping[str, Any], *, now: int, actor: str
    ) -> None:
        with self._lock:
            self.entries.append(AuditEntry(now, actor, reservation_id, "delivery", detail=detail))
