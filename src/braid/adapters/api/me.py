"""`/v1/me`: who the token belongs to, so a front end can show what the caller may do,
and the caller's own settings (`tz`: the zone their local times are read in)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from braid.adapters.api.deps import Authorized
from braid.adapters.api.models import Text, _Body
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.app.records import User

router = APIRouter(tags=["health"])


class MeOut(BaseModel):
    name: str
    role: str
    tz: str | None = None


class MeIn(_Body):
    """Settings to change; a setting left out stays as it is."""

    tz: Text = None


def _view(user: User) -> dict[str, Any]:
    return {"name": user.name, "role": user.role, "tz": user.tz}


@router.get("/v1/me", response_model=MeOut, responses=errors(401))
async def me(caller: Authorized) -> JSONResponse:
    """The caller's user name, role (`user` or `operator`) and time zone setting
    (`tz`, an IANA name; null when none is set)."""
    return JSONResponse(_view(caller.user))


@router.patch("/v1/me", response_model=MeOut, responses=errors(401, 422))
async def change_me(
    caller: Authorized,
    body: MeIn,
) -> JSONResponse:
    """Set your time zone (`{"tz": "Europe/Paris"}`; `{"tz": null}` clears it): local
    times you send without an offset or zone (`2026-12-04 17:00`, `friday 17:00`) are
    read in it. Responses stay in UTC unless you ask with `?tz=`."""
    sent = body.sent()
    user = caller.user
    if "tz" in sent:
        user = await off_loop(caller.service.identities.set_tz, user, sent["tz"])
    return JSONResponse(_view(user))
