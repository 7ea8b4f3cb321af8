"""The reservation service's results as the REST API encodes them.

Service tests assert on what a user is shown (states, paths, instants), so
they read results through the same views the API sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from braid.adapters.api.views import (
    audit_view,
    availability_view,
    maintenance_view,
    page_view,
    reservation_view,
)
from braid.app.records import User
from braid.app.reservations import operations
from braid.app.reservations.commands import Modify, Reserve
from braid.app.reservations.service import ReservationService


class AsRest:
    def __init__(self, service: ReservationService) -> None:
        self.service = service

    def reserve(self, user: User, body: Mapping[str, Any]) -> dict[str, Any]:
        return reservation_view(self.service.reserve(user, Reserve.parse(body)))

    def get(self, user: User, reservation_id: str) -> dict[str, Any]:
        return reservation_view(self.service.get(user, reservation_id))

    def cancel(self, user: User, reservation_id: str) -> dict[str, Any]:
        return reservation_view(self.service.cancel(user, reservation_id))

    def confirm(self, user: User, reservation_id: str) -> dict[str, Any]:
        return reservation_view(self.service.confirm(user, reservation_id))

    def modify(self, user: User, reservation_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return reservation_view(self.service.modify(user, reservation_id, Modify.parse(body)))

    def find(self, user: User, query: Mapping[str, Any]) -> dict[str, Any]:
        return page_view(self.service.find(user, query))

    def audit(self, user: User, reservation_id: str) -> list[dict[str, Any]]:
        return [audit_view(e) for e in self.service.audit(user, reservation_id)]

    def availability(self, user: User, query: Mapping[str, Any]) -> dict[str, Any]:
        return availability_view(self.service.availability(user, query))

    def maintenance(self, user: User, body: Mapping[str, Any]) -> dict[str, Any]:
        return maintenance_view(operations.maintenance(self.service.books, user, body))


def rest(service: ReservationService) -> AsRest:
    return AsRest(service)
