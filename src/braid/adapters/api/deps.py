"""What the routers depend on: the caller (with the service), resolved once per request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.openapi.models import HTTPBearer as HTTPBearerModel
from fastapi.security.base import SecurityBase

from braid.adapters.api.local_times import asked_zone
from braid.adapters.api.offload import off_loop
from braid.app.auth import check_route, require_metrics_reader
from braid.app.records import User
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking, and the service that answers them."""

    user: User
    service: ReservationService


def service_of(request: Request) -> ReservationService:
    service: ReservationService = request.app.state.service
    return service


class _Bearer(SecurityBase):
    """The bearer scheme as /openapi.json declares it, and the one dependency that checks it.

    One dependency instead of three (service, header scheme, user): FastAPI's
    dependency solving costs more per request than the token check itself.
    Being a `SecurityBase` is what puts the scheme (the "Authorize" button of
    /docs) and each route's security requirement into the document. The
    header is checked by the service's `authenticate`, so the API and any
    other front end accept and refuse exactly the same tokens.
    """

    def __init__(self) -> None:
        self.model = HTTPBearerModel(description="a token from `braid token create`")
        self.scheme_name = "HTTPBearer"

    async def __call__(self, request: Request) -> Caller:
        service = service_of(request)
        header = request.headers.get("authorization")
        user = service.identities.cached(header)
        if user is None:
            # Asking the store blocks: off the event loop.
            user = await off_loop(service.identities.authenticate, header)
        # The route as routed (its template, e.g. /v1/links/{link}/state): a role
        # limited to some routes (a monitor) is refused the others here, for all.
        route = getattr(request.scope.get("route"), "path", request.url.path)
        check_route(user, request.method, route)
        asked = asked_zone(request.scope)
        if asked is not None:  # `?tz=me`: the caller's own setting, known from here on
            asked.for_caller(user.tz)
        return Caller(user, service)


Authorized = Annotated[Caller, Depends(_Bearer())]


class _MetricsBearer(_Bearer):
    """The check of /metrics: an operator's or a monitor's bearer token, unless the
    server runs with its metrics open (`metrics_open`, `braid serve --metrics-open`)."""

    async def __call__(self, request: Request) -> Caller | None:  # type: ignore[override]
        settings: Settings = request.app.state.settings
        if settings.metrics_open or settings.insecure:
            return None
        caller = await super().__call__(request)
        require_metrics_reader(caller.user)
        return caller


MetricsReader = Annotated[Caller | None, Depends(_MetricsBearer())]
