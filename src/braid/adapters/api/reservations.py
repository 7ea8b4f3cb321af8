"""`/v1/reservations`: book, list, show, modify, confirm, cancel, audit."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from braid.adapters.api.deps import Authorized
from braid.adapters.api.fastjson import FastJSON
from braid.adapters.api.idempotency import IdempotencyKey, replayed_headers
from braid.adapters.api.models import (
    AuditList,
    ListQuery,
    ModifyIn,
    ReservationIn,
    ReservationList,
    ReservationOut,
)
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.adapters.api.views import audit_view, page_view, reservation_view
from braid.app.reservations.commands import Modify, Reserve
from braid.app.reservations.idempotency import check_key

router = APIRouter(prefix="/v1/reservations", tags=["reservations"])

_ONE = errors(401, 403, 404)
# Handlers return FastJSON (orjson) so the views go out exactly as built;
# the response models only document them. The service blocks (store, locks):
# every call to it goes through `off_loop`, never on the event loop.


@router.post(
    "",
    status_code=201,
    response_model=ReservationOut,
    responses=errors(401, 409, 413, 422),
    summary="Reserve bandwidth (or hold it with hold=true)",
)
async def reserve(
    body: ReservationIn, caller: Authorized, idempotency_key: IdempotencyKey = None
) -> FastJSON:
    """With an `Idempotency-Key`, a retry gets the reservation the first request made."""
    command = Reserve.parse(body.sent(), idempotency_key)
    seen = await off_loop(caller.service.reserve, caller.user, command)
    headers = replayed_headers(seen.replayed)
    return FastJSON(reservation_view(seen), status_code=201, headers=headers)


@router.get("", response_model=ReservationList, responses=errors(401, 422))
async def find(query: Annotated[ListQuery, Query()], caller: Authorized) -> FastJSON:
    """Reservations the caller may see, by start then id, a page at a time.

    A page holds at most `limit` rows; when `next` is not null, send it as
    `after` to get the following page (it may hold fewer rows than `limit`,
    even none, when a state filter leaves some out).
    """
    return FastJSON(page_view(await off_loop(caller.service.find, caller.user, query.given())))


@router.get("/{reservation_id}", response_model=ReservationOut, responses=_ONE)
async def show(reservation_id: str, caller: Authorized) -> FastJSON:
    seen = await off_loop(caller.service.get, caller.user, reservation_id)
    return FastJSON(reservation_view(seen))


@router.delete(
    "/{reservation_id}", response_model=ReservationOut, responses=errors(401, 403, 404, 422)
)
async def cancel(reservation_id: str, caller: Authorized) -> FastJSON:
    """Cancel: the bandwidth is free for others at once."""
    seen = await off_loop(caller.service.cancel, caller.user, reservation_id)
    return FastJSON(reservation_view(seen))


@router.patch(
    "/{reservation_id}",
    response_model=ReservationOut,
    responses=errors(401, 403, 404, 409, 413, 422),
)
async def modify(reservation_id: str, body: ModifyIn, caller: Authorized) -> FastJSON:
    """Change the end and/or bandwidth (a volume: deadline, volume, max_rate, objective);
    the old booking stays until the new one fits."""
    # Local times in the caller's zone, day words at the service's now.
    change = Modify.parse(body.sent(), zone=caller.user.tz, now=caller.service.clock())
    seen = await off_loop(caller.service.modify, caller.user, reservation_id, change)
    return FastJSON(reservation_view(seen))


@router.post(
    "/{reservation_id}/confirm", response_model=ReservationOut, responses=errors(401, 403, 404, 422)
)
async def confirm(
    reservation_id: str, caller: Authorized, idempotency_key: IdempotencyKey = None
) -> FastJSON:
    """Turn a hold into a reservation before the hold expires."""
    key = check_key(idempotency_key)
    seen = await off_loop(caller.service.confirm, caller.user, reservation_id, key)
    return FastJSON(reservation_view(seen), headers=replayed_headers(seen.replayed))


@router.get("/{reservation_id}/audit", response_model=AuditList, responses=_ONE)
async def audit(reservation_id: str, caller: Authorized) -> FastJSON:
    """Every change to the reservation: who, when, from which state to which."""
    entries = await off_loop(caller.service.audit, caller.user, reservation_id)
    return FastJSON({"entries": [audit_view(e) for e in entries]})
