"""`/v1/me`: who the token belongs to, so a front end can show what the caller may do."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from braid.adapters.api.deps import Authorized
from braid.adapters.api.responses import errors

router = APIRouter(tags=["health"])


class MeOut(BaseModel):
    name: str
    role: str


@router.get("/v1/me", response_model=MeOut, responses=errors(401))
async def me(caller: Authorized) -> JSONResponse:
    """The caller's user name and role (`user` or `operator`)."""
    return JSONResponse({"name": caller.user.name, "role": caller.user.role})
