"""What the routers depend on: the caller (with the service), resolved once per request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.openapi.models import HTTPBearer as HTTPBearerModel
from fastapi.security.base import SecurityBase

from braid.adapters.api.offload import off_loop
from braid.app.auth import authenticate, check_route
from braid.app.records import User
from braid.app.service import ReservationService


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
        user = service.tokens.get(header)
        if user is None:
            # Asking the store blocks: off the event loop.
            user = await off_loop(authenticate, service.repo, header, service.tokens)
        # The route as routed (its template, e.g. /v1/links/{link}/state): a role
        # limited to some routes (a monitor) is refused the others here, for all.
        route = getattr(request.scope.get("route"), "path", request.url.path)
        check_route(user, request.method, route)
        return Caller(user, service)


Authorized = Annotated[Caller, Depends(_Bearer())]
