"""`/v1/availability`: ask the planner without booking anything."""

from __future__ import annotations

import re
from typing import Annotated, Any, Final

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from braid.adapters.api.deps import Authorized
from braid.adapters.api.models import AvailabilityOut, AvailabilityQuery
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.adapters.api.views import availability_view

router = APIRouter(tags=["availability"])

_INTEGER: Final = re.compile(r"^[+-]?[0-9]+$")
_FLAGS: Final = {"true": True, "false": False}


@router.get("/v1/availability", response_model=AvailabilityOut, responses=errors(401, 422))
async def availability(
    query: Annotated[AvailabilityQuery, Query()], caller: Authorized
) -> JSONResponse:
    """Would this fit, when is the earliest slot, how much fits, which slots are free."""
    answer = await off_loop(caller.service.availability, caller.user, typed(query.given()))
    return JSONResponse(availability_view(answer))


def typed(query: dict[str, str]) -> dict[str, Any]:
    """Query strings the service expects typed; anything odd is left for it to reject."""
    out: dict[str, Any] = dict(query)
    for name in ("max_paths", "volume"):  # a bare volume is bytes, as in a body
        if name in out and _INTEGER.match(out[name]):
            out[name] = int(out[name])
    if "directional" in out and out["directional"].lower() in _FLAGS:
        out["directional"] = _FLAGS[out["directional"].lower()]
    return out
