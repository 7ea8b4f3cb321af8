"""`/v1/topology` and `/v1/maintenance`: what the network is, and taking parts of it out."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Final

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from braid.adapters.api.deps import Authorized
from braid.adapters.api.health import store_check
from braid.adapters.api.idempotency import IdempotencyKey, replayed_headers
from braid.adapters.api.models import (
    MaintenanceIn,
    MaintenanceOut,
    TopologyIn,
    TopologyOut,
    TopologyPutOut,
)
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.adapters.api.views import maintenance_view
from braid.app.reservations import network_history, operations
from braid.core.model.instants import format_instant
from braid.core.model.units import to_mbps

router = APIRouter(tags=["topology"])

# GET adds these to the topology; dropping them on PUT lets a client send back
# an edited copy of what it read.
_READ_ONLY: Final = ("v", "version")


@router.get("/v1/topology", response_model=TopologyOut, responses=errors(401))
async def get_topology(caller: Authorized) -> JSONResponse:
    """The current topology version, normalised (capacities in Mbit/s)."""
    # Any authenticated caller may read it.
    return JSONResponse(await off_loop(operations.get_topology, caller.service.books))


@router.get("/v1/topology/versions", responses=errors(401))
async def topology_versions(caller: Authorized) -> JSONResponse:
    """Every stored topology version, newest first: when, by whom, its size, what changed."""
    found = await off_loop(network_history.topology_versions, caller.service.books, caller.user)
    return JSONResponse({"versions": [_version(v) for v in found]})


def _version(change: network_history.TopologyChange) -> dict[str, Any]:
    added, removed, resized = change.counts
    return {
        "version": change.version,
        "created_at": format_instant(change.created_at),
        "actor": change.actor,
        "nodes": change.nodes,
        "links": change.links,
        "capacity": to_mbps(change.capacity),
        "added": {"count": added, "links": list(change.added)},
        "removed": {"count": removed, "links": list(change.removed)},
        "resized": {"count": resized, "links": list(change.resized)},
    }


@router.put(
    "/v1/topology", response_model=TopologyPutOut, responses=errors(401, 403, 409, 413, 422)
)
async def put_topology(
    body: TopologyIn,
    caller: Authorized,
    request: Request,
    force: Annotated[
        bool, Query(description="mark reservations that no longer fit as failed")
    ] = False,
) -> JSONResponse:
    """Store a new topology version (operators); refuses if bookings would no longer fit."""
    data = {k: v for k, v in body.sent().items() if k not in _READ_ONLY}
    put = partial(operations.put_topology, force=force)
    answer = await off_loop(put, caller.service.books, caller.user, data)
    store_check(request).forget()  # /healthz shows the new version at once
    return JSONResponse(answer)


@router.post(
    "/v1/maintenance",
    status_code=201,
    response_model=MaintenanceOut,
    responses=errors(401, 403, 409, 413, 422),
)
async def maintenance(
    body: MaintenanceIn, caller: Authorized, idempotency_key: IdempotencyKey = None
) -> JSONResponse:
    """Take a link or node out for a window (operators); affected bookings are re-routed."""
    done = await off_loop(
        operations.maintenance, caller.service.books, caller.user, body.sent(), idempotency_key
    )
    headers = replayed_headers(done.maintenance.replayed)
    return JSONResponse(maintenance_view(done), status_code=201, headers=headers)
