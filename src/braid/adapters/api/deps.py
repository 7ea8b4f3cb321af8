"""Dependencies shared by the routers: the service and the caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from braid.app.auth import authenticate
from braid.app.records import User
from braid.app.service import ReservationService
from braid.app.settings import Settings

# Declares the scheme in /openapi.json (the "Authorize" button of /docs); the
# header itself is checked by the service's `authenticate`, so the API and any
# other front end accept and refuse exactly the same tokens.
_bearer = HTTPBearer(auto_error=False, description="a token from `braid token create`")


def get_service(request: Request) -> ReservationService:
    service: ReservationService = request.app.state.service
    return service


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def current_user(
    request: Request,
    service: Annotated[ReservationService, Depends(get_service)],
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    return authenticate(service.repo, request.headers.get("authorization"))


Service = Annotated[ReservationService, Depends(get_service)]
Caller = Annotated[User, Depends(current_user)]
