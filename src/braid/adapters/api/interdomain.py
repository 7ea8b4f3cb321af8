"""`/v1/interdomain/reservations`: multi-domain reservations negotiated with the domain agents.

    mount_interdomain(app, service)   # service: InterdomainService, or None (answers 503)

A negotiation blocks on the network, so every call goes to the service's own
thread pool and the event loop only waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal, TypeVar

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from braid.adapters.api.deps import Authorized
from braid.adapters.api.errors import error_response
from braid.adapters.api.models import ErrorOut
from braid.adapters.api.responses import errors
from braid.app.domain_view import DomainNetwork, domain_network
from braid.app.interdomain import LIST_LIMIT, MAX_PATHS, InterdomainService, Outcome
from braid.app.interdomain import InterdomainUnavailableError as Unavailable
from braid.core.model.units import to_mbps

T = TypeVar("T")
NOT_CONFIGURED: Final = (
    "multi-domain reservations are not configured on this server "
    "(start `braid serve` with --domains FILE, a topology with a `domains` section)"
)

_UNAVAILABLE: Final[dict[int | str, dict[str, Any]]] = {
    503: {"model": ErrorOut, "description": "not configured (no --domains), or agents not reached"}
}
router = APIRouter(prefix="/v1/interdomain/reservations", tags=["interdomain"])
network_router = APIRouter(prefix="/v1/interdomain", tags=["interdomain"])


class EndpointIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    domain: str = Field(description="a site domain of the topology's `domains` section")
    point: str = Field(description="a border point or a host inside that site")


class InterdomainIn(BaseModel):
    """A multi-domain reservation; omitted options take the server's defaults."""

    model_config = ConfigDict(extra="forbid")
    src: EndpointIn
    dst: EndpointIn
    bandwidth: int | float | str | None = Field(
        None, description="Mbit/s, or with a unit: 500M, 10G (a window booking)"
    )
    start: str | None = Field(None, description="ISO 8601 with offset (with bandwidth)")
    end: str | None = Field(None, description="ISO 8601 with offset (with bandwidth)")
    strategy: str | None = Field(None, description="equal-split, partial-offers or full-offers")
    max_paths: int | None = Field(None, description=f"candidate domain paths, 1-{MAX_PATHS}")
    volume: int | str | None = Field(
        None, description="bytes to move instead of a bandwidth: 40TB, 500GiB (needs deadline)"
    )
    deadline: str | None = Field(None, description="ISO 8601: the volume is moved by then")
    not_before: str | None = Field(None, description="ISO 8601: not sent before (default now)")
    max_rate: int | float | str | None = Field(
        None, description="the most the hosts send at once: 10G (a volume only)"
    )
    policing: Literal["soft", "hard"] | None = Field(
        None,
        description="traffic above the rate: soft (default) goes on as best effort, hard is "
        "discarded where a site's traffic enters (a window booking)",
    )


class InterdomainChangeIn(BaseModel):
    """A modify: the fields of a reservation to change; omitted ones stay as they are."""

    model_config = ConfigDict(extra="forbid")
    src: EndpointIn | None = Field(None, description="cannot change (allowed if the same)")
    dst: EndpointIn | None = Field(None, description="cannot change (allowed if the same)")
    bandwidth: int | float | str | None = Field(None, description="Mbit/s, or 500M, 10G")
    start: str | None = Field(None, description="ISO 8601 with offset")
    end: str | None = Field(None, description="ISO 8601 with offset")
    strategy: str | None = Field(None, description="equal-split, partial-offers or full-offers")
    max_paths: int | None = Field(None, description=f"candidate domain paths, 1-{MAX_PATHS}")
    volume: int | str | None = Field(
        None, description="a volume's new total (counting what moved): bytes, or 40TB"
    )
    deadline: str | None = Field(None, description="a volume's: ISO 8601 with offset")
    max_rate: int | float | str | None = Field(None, description="a volume's: Mbit/s, or 10G")


def _service(request: Request) -> InterdomainService:
    service: InterdomainService | None = getattr(request.app.state, "interdomain", None)
    if service is None:
        raise Unavailable(NOT_CONFIGURED)
    return service


async def _off_loop(service: InterdomainService, call: Callable[..., T], *args: Any) -> T:
    return await asyncio.wrap_future(service.submit(call, *args))


@router.post(
    "",
    status_code=201,
    responses=errors(401, 409, 413, 422) | _UNAVAILABLE,
    summary="Negotiate a multi-domain reservation (two-phase commit with every domain)",
)
async def reserve(body: InterdomainIn, caller: Authorized, request: Request) -> JSONResponse:
    """201 with the committed plan, or 409 with the reason (nothing is left held)."""
    service = _service(request)
    outcome = await _off_loop(
        service, service.reserve, caller.user, body.model_dump(exclude_none=True)
    )
    if outcome.committed:
        return JSONResponse(outcome.view, status_code=201)
    return _refused(outcome)


def _refused(outcome: Outcome) -> JSONResponse:
    """409 with the negotiation's reason, or 503 when agents gave no answer."""
    if outcome.unreachable:
        raise Unavailable(
            f"domain agents not reached: {', '.join(outcome.unreachable)}; nothing was "
            f"booked, try again later (reservation {outcome.view['id']})"
        )
    body_out = {"error": {"code": "rejected", "message": outcome.view["reason"]}}
    body_out["error"]["reservation"] = outcome.view["id"]
    for key in ("most_by_deadline", "earliest_completion"):  # a volume's refusal
        if key in outcome.view:
            body_out["error"][key] = outcome.view[key]
    return JSONResponse(body_out, status_code=409)


@router.get("", responses=errors(401, 422) | _UNAVAILABLE)
async def find(
    caller: Authorized,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=LIST_LIMIT)] = 100,
) -> JSONResponse:
    """The caller's multi-domain reservations, newest first (operators: everyone's)."""
    service = _service(request)
    return JSONResponse(
        {"reservations": await _off_loop(service, service.find, caller.user, limit)}
    )


@router.get("/{reservation_id}", responses=errors(401, 404) | _UNAVAILABLE)
async def show(reservation_id: str, caller: Authorized, request: Request) -> JSONResponse:
    """One reservation with its paths, per-domain amounts, VLANs, rule plan and trace."""
    service = _service(request)
    return JSONResponse(await _off_loop(service, service.get, caller.user, reservation_id))


@router.delete("/{reservation_id}", responses=errors(401, 404, 409) | _UNAVAILABLE)
async def cancel(reservation_id: str, caller: Authorized, request: Request) -> JSONResponse:
    """Release the reservation in every domain (owner or operator); a repeat answers the same.

    409 when it failed (nothing is held) or is still being negotiated."""
    service = _service(request)
    return JSONResponse(await _off_loop(service, service.cancel, caller.user, reservation_id))


@router.patch("/{reservation_id}", responses=errors(401, 403, 404, 409, 422) | _UNAVAILABLE)
async def modify(
    reservation_id: str, body: InterdomainChangeIn, caller: Authorized, request: Request
) -> JSONResponse:
    """Change bandwidth, window, max_paths or strategy, make-before-break (owner or operator);
    for a volume reservation its volume, deadline or max_rate instead.

    200 with the new version (committed in every domain; the old one released);
    409 with the reason when it does not fit (the old version counted as free; a
    volume's says the most by the deadline and the earliest completion), or the
    reservation is not committed: the old version stands unchanged."""
    service = _service(request)
    given = body.model_dump(exclude_none=True)
    outcome = await _off_loop(service, service.modify, caller.user, reservation_id, given)
    if outcome.committed:
        return JSONResponse(outcome.view)
    return _refused(outcome)


@network_router.get("/domains", responses=errors(401) | _UNAVAILABLE)
async def domains(caller: Authorized, request: Request) -> JSONResponse:
    """The domains (sites first) with the points a request may name, and the border links."""
    service = _service(request)
    found = await _off_loop(service, domain_network, service, caller.user)
    return JSONResponse(_network_view(found))


def _network_view(found: DomainNetwork) -> dict[str, Any]:
    return {
        "domains": [
            {"id": d.id, "kind": d.kind, "visible": d.visible, "points": list(d.points),
             "borders": list(d.borders)}
            for d in found.domains
        ],
        "links": [
            {"id": k.id, "a": k.a, "b": k.b, "domains": [k.a_domain, k.b_domain],
             "capacity": to_mbps(k.capacity), "vlans": list(k.vlans), "owner": k.owner}
            for k in found.links
        ],
        "strategy": found.strategy,
        "max_paths": found.max_paths,
    }  # fmt: skip


def mount_interdomain(app: FastAPI, service: InterdomainService | None) -> None:
    """Add the routes (and the 503 mapping) to `app`; with no service every route answers 503."""
    app.state.interdomain = service

    async def on_unavailable(_: Request, exc: Exception) -> JSONResponse:
        return error_response(503, "unavailable", str(exc))

    app.add_exception_handler(Unavailable, on_unavailable)
    app.include_router(router)
    app.include_router(network_router)
