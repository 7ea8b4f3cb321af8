"""`/v1/reservations`: book, list, show, modify, confirm, cancel, audit."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from braid.adapters.api.deps import Caller, Service
from braid.adapters.api.fastjson import FastJSON
from braid.adapters.api.models import (
    AuditList,
    ListQuery,
    ModifyIn,
    ReservationIn,
    ReservationList,
    ReservationOut,
)
from braid.adapters.api.responses import errors

router = APIRouter(prefix="/v1/reservations", tags=["reservations"])

_ONE = errors(401, 403, 404)
# Handlers return FastJSON (orjson) so the service's dicts go out exactly as built;
# the response models only document them.


@router.post(
    "",
    status_code=201,
    response_model=ReservationOut,
    responses=errors(401, 409, 413, 422),
    summary="Reserve bandwidth (or hold it with hold=true)",
)
def reserve(body: ReservationIn, user: Caller, service: Service) -> FastJSON:
    return FastJSON(service.reserve(user, body.sent()), status_code=201)


@router.get("", response_model=ReservationList, responses=errors(401, 422))
def find(query: Annotated[ListQuery, Query()], user: Caller, service: Service) -> FastJSON:
    """Reservations the caller may see, by start then id, a page at a time.

    A page holds at most `limit` rows; when `next` is not null, send it as
    `after` to get the following page (it may hold fewer rows than `limit`,
    even none, when a state filter leaves some out).
    """
    return FastJSON(service.find(user, query.given()))


@router.get("/{reservation_id}", response_model=ReservationOut, responses=_ONE)
def show(reservation_id: str, user: Caller, service: Service) -> FastJSON:
    return FastJSON(service.get(user, reservation_id))


@router.delete(
    "/{reservation_id}", response_model=ReservationOut, responses=errors(401, 403, 404, 422)
)
def cancel(reservation_id: str, user: Caller, service: Service) -> FastJSON:
    """Cancel: the bandwidth is free for others at once."""
    return FastJSON(service.cancel(user, reservation_id))


@router.patch(
    "/{reservation_id}",
    response_model=ReservationOut,
    responses=errors(401, 403, 404, 409, 413, 422),
)
def modify(reservation_id: str, body: ModifyIn, user: Caller, service: Service) -> FastJSON:
    """Change the end and/or bandwidth; the old booking stays until the new one fits."""
    return FastJSON(service.modify(user, reservation_id, body.sent()))


@router.post(
    "/{reservation_id}/confirm", response_model=ReservationOut, responses=errors(401, 403, 404, 422)
)
def confirm(reservation_id: str, user: Caller, service: Service) -> FastJSON:
    """Turn a hold into a reservation before the hold expires."""
    return FastJSON(service.confirm(user, reservation_id))


@router.get("/{reservation_id}/audit", response_model=AuditList, responses=_ONE)
def audit(reservation_id: str, user: Caller, service: Service) -> FastJSON:
    """Every change to the reservation: who, when, from which state to which."""
    return FastJSON({"entries": service.audit(user, reservation_id)})
