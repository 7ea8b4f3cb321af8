"""`/v1/links`: what is booked on each link now or at an instant, and one link over time."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from braid.adapters.api.deps import Authorized
from braid.adapters.api.models import LinkStateIn, LinkStateOut
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.adapters.api.views import link_state_view
from braid.app.reservations import link_state as link_state_app
from braid.app.reservations import links, network_history
from braid.core.model.instants import format_instant
from braid.core.model.timeline import Step
from braid.core.model.units import to_mbps

router = APIRouter(tags=["topology"])


class LinkLevelOut(BaseModel):
    id: str
    a: str
    b: str
    capacity: float
    booked: dict[str, float]


class LinksOut(BaseModel):
    at: str
    links: list[LinkLevelOut]


class LinkUsageOut(BaseModel):
    id: str
    a: str
    b: str
    capacity: float
    start: str
    end: str
    steps: dict[str, list[list[Any]]]
    maintenance: list[dict[str, str]]


@router.get("/v1/links", response_model=LinksOut, responses=errors(401, 422))
async def link_levels(
    caller: Authorized,
    at: Annotated[str | None, Query(description="an instant; now when left out")] = None,
) -> JSONResponse:
    """Every link's booked Mbit/s in each direction (`a-b`, `b-a`) at one instant."""
    answer = await off_loop(links.levels_at, caller.service.books, caller.user, at)
    levels = [_level(level) for level in answer.links]
    return JSONResponse({"at": format_instant(answer.at), "links": levels})


@router.get("/v1/links/{link}/usage", response_model=LinkUsageOut, responses=errors(401, 422))
async def link_usage(
    link: str,
    caller: Authorized,
    start: Annotated[str, Query(description="from this instant")],
    end: Annotated[str, Query(description="until this instant (at most 366 days later)")],
) -> JSONResponse:
    """One link's booked Mbit/s over time as steps `[start, end, booked]`, and its maintenance."""
    ask = partial(links.usage, link=link, start=start, end=end)
    answer = await off_loop(ask, caller.service.books, caller.user)
    return JSONResponse(usage_view(answer))


@router.post(
    "/v1/links/{link}/state", response_model=LinkStateOut, responses=errors(401, 403, 409, 422)
)
async def link_state(link: str, body: LinkStateIn, caller: Authorized) -> JSONResponse:
    """Say a link is `up` or `down` (operators and monitors); its reservations follow.

    Down: protected reservations move to their standby, others are re-planned
    around it or marked degraded; no new plan uses it. Up: protected ones go
    back to their primary (unless the `failback` setting is false).
    Every move is in the audit log; the switches follow through the driver.
    """
    service = caller.service
    ask = partial(
        link_state_app.set_link_state, link=link, body=body.sent(), failback=service.failback
    )
    done = await off_loop(ask, service.books, caller.user)
    return JSONResponse(link_state_view(done))


@router.get("/v1/maintenance", responses=errors(401))
async def maintenance_list(caller: Authorized) -> JSONResponse:
    """Maintenance windows that have not ended, by start, with the links each takes out."""
    found = await off_loop(network_history.maintenance_windows, caller.service.books, caller.user)
    return JSONResponse({"maintenance": [_maintenance(entry) for entry in found]})


def _maintenance(entry: network_history.MaintenanceEntry) -> dict[str, Any]:
    return {
        **_window(entry.window),
        "owner": entry.owner,
        "target": entry.target,
        "links": list(entry.links),
    }


def _window(w: links.MaintenanceWindow) -> dict[str, Any]:
    return {
        "id": w.id,
        "start": format_instant(w.start),
        "end": format_instant(w.end),
        "reason": w.reason,
    }


def _level(level: links.LinkLevel) -> dict[str, Any]:
    return {
        "id": level.id,
        "a": level.a,
        "b": level.b,
        "capacity": to_mbps(level.capacity),
        "booked": {"a-b": to_mbps(level.forward), "b-a": to_mbps(level.backward)},
    }


def usage_view(usage: links.LinkUsage) -> dict[str, Any]:
    return {
        "id": usage.id,
        "a": usage.a,
        "b": usage.b,
        "capacity": to_mbps(usage.capacity),
        "start": format_instant(usage.start),
        "end": format_instant(usage.end),
        "steps": {"a-b": _steps(usage.forward), "b-a": _steps(usage.backward)},
        "maintenance": [_window(w) for w in usage.maintenance],
    }


def _steps(steps: tuple[Step, ...]) -> list[list[Any]]:
    return [[format_instant(a), format_instant(b), to_mbps(level)] for a, b, level in steps]
