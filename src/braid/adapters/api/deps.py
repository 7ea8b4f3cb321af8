"""Dependencies shared by the routers: the service and the caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from braid.app.auth import authenticate
from braid.app.records import User
from braid.app.service import ReservationService
from braid.app.settings import Settings

# Declares the scheme in /openapi.json (the "Authorize" button of /docs); the
# header itself is checked by the service's `authenticate`, so the API and any
# other front end accept and refuse exactly the same tokens.
_bearer = HTTPBearer(auto_error=False, description="a token from `braid token create`")


# The dependencies are `async`: FastAPI runs a plain `def` dependency in the
# thread pool, a hop per dependency per request for what is a dict lookup.


async def get_service(request: Request) -> ReservationService:
    service: ReservationService = request.app.state.service
    return service


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def current_user(
    request: Request,
    service: Annotated[ReservationService, Depends(get_service)],
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    header = request.headers.get("authorization")
    cached = service.tokens.get(header)
    if cached is not None:
        return cached
    # Asking the store blocks: off the event loop.
    return await run_in_threadpool(authenticate, service.repo, header, service.tokens)


Service = Annotated[ReservationService, Depends(get_service)]
Caller = Annotated[User, Depends(current_user)]
