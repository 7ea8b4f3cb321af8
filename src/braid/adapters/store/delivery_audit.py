"""`SqlDeliveryAudit`: a reservation's delivery becoming degraded, in the audit log beside
its other entries (so `GET /v1/reservations/{id}/audit` shows it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, insert

from braid.adapters.store.codec import AUDIT, audit_values
from braid.adapters.store.engine import writer
from braid.app.records import AuditEntry

__all__ = ["SqlDeliveryAudit"]


class SqlDeliveryAudit:
    def __init__(self, engine: Engine) -> None:
        self._writer = writer(engine)

    def degraded(
        self, reservation_id: str, detail: Mapping[str, Any], *, now: int, actor: str
    ) -> None:
        entry = AuditEntry(now, actor, reservation_id, "delivery", detail=detail)
        with self._writer.begin() as connection:
            connection.execute(insert(AUDIT), [audit_values(entry)])
