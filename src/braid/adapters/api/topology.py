"""`/v1/topology` and `/v1/maintenance`: what the network is, and taking parts of it out."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from braid.adapters.api.deps import Caller, Service
from braid.adapters.api.models import (
    MaintenanceIn,
    MaintenanceOut,
    TopologyIn,
    TopologyOut,
    TopologyPutOut,
)
from braid.adapters.api.responses import errors
from braid.app import operations

router = APIRouter(tags=["topology"])

# GET adds these to the topology; dropping them on PUT lets a client send back
# an edited copy of what it read.
_READ_ONLY: Final = ("v", "version")


@router.get("/v1/topology", response_model=TopologyOut, responses=errors(401))
def get_topology(user: Caller, service: Service) -> JSONResponse:
    """The current topology version, normalised (capacities in Mbit/s)."""
    del user  # any authenticated caller may read it
    return JSONResponse(operations.get_topology(service))


@router.put(
    "/v1/topology", response_model=TopologyPutOut, responses=errors(401, 403, 409, 413, 422)
)
def put_topology(
    body: TopologyIn,
    user: Caller,
    service: Service,
    force: Annotated[
        bool, Query(description="mark reservations that no longer fit as failed")
    ] = False,
) -> JSONResponse:
    """Store a new topology version (operators); refuses if bookings would no longer fit."""
    data = {k: v for k, v in body.sent().items() if k not in _READ_ONLY}
    return JSONResponse(operations.put_topology(service, user, data, force=force))


@router.post(
    "/v1/maintenance",
    status_code=201,
    response_model=MaintenanceOut,
    responses=errors(401, 403, 409, 413, 422),
)
def maintenance(body: MaintenanceIn, user: Caller, service: Service) -> JSONResponse:
    """Take a link or node out for a window (operators); affected bookings are re-routed."""
    return JSONResponse(operations.maintenance(service, user, body.sent()), status_code=201)
