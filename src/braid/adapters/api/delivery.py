"""`GET /v1/reservations/{id}/delivery`: what the reservation's traffic got, measured.

The samples come from the `braid serve` delivery loop (`app.state.delivery`,
set by `mount_delivery`); without provisioning there is none, and every
reservation is `unmeasured`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request

from braid.adapters.api.deps import Authorized
from braid.adapters.api.fastjson import FastJSON
from braid.adapters.api.models import DeliveryOut
from braid.adapters.api.offload import off_loop
from braid.adapters.api.responses import errors
from braid.app.delivery.history import DeliveryHistory
from braid.app.delivery.reports import ReservationDelivery, reservation_delivery
from braid.app.delivery.targets import booked_bps
from braid.core.delivery import DeliveryInterval, DeliveryTotals
from braid.core.model.instants import format_instant
from braid.core.model.units import BPS_PER_MBPS, to_mbps

__all__ = ["delivery_view", "mount_delivery", "router"]

router = APIRouter(prefix="/v1/reservations", tags=["reservations"])


def mount_delivery(app: FastAPI, history: DeliveryHistory | None, every: float | None) -> None:
    """Where the delivery route finds its samples, and how often they are taken."""
    app.state.delivery = history
    app.state.delivery_seconds = every


@router.get(
    "/{reservation_id}/delivery", response_model=DeliveryOut, responses=errors(401, 403, 404)
)
async def delivery(reservation_id: str, caller: Authorized, request: Request) -> FastJSON:
    """Offered, delivered and dropped rates per sampling interval, totals, and a status.

    Per direction: offered is what the sender's switch counted at the
    reservation's entry rule, delivered what the receiver's switch handed to
    the receiver, dropped what the hard policing meter dropped.
    """
    seen = await off_loop(caller.service.get, caller.user, reservation_id)
    history: DeliveryHistory | None = getattr(request.app.state, "delivery", None)
    sampled = None if history is None else history.get(reservation_id)
    found = reservation_delivery(reservation_id, booked_bps(seen.record, seen.now), sampled)
    every: float | None = getattr(request.app.state, "delivery_seconds", None)
    return FastJSON(delivery_view(found, every if history is not None else None))


def delivery_view(found: ReservationDelivery, every: float | None) -> dict[str, Any]:
    return {
        "reservation": found.reservation_id,
        "booked": to_mbps(found.booked_bps),
        "status": found.status.value,
        "interval_seconds": every,
        "directions": [
            {
                "from": d.sender,
                "to": d.receiver,
                "status": d.report.status.value,
                "delivered_share": d.report.delivered_share,
                "totals": _totals(d.report.totals),
                "intervals": [_interval(i) for i in d.report.intervals],
            }
            for d in found.directions
        ],
    }


def _totals(t: DeliveryTotals) -> dict[str, int]:
    return {
        "seconds": t.seconds,
        "offered_bytes": t.offered_bytes,
        "delivered_bytes": t.delivered_bytes,
        "dropped_bytes": t.dropped_bytes,
        "offered_packets": t.offered_packets,
        "delivered_packets": t.delivered_packets,
        "dropped_packets": t.dropped_packets,
    }


def _interval(i: DeliveryInterval) -> dict[str, Any]:
    return {
        "start": format_instant(i.start),
        "end": format_instant(i.end),
        "offered": round(i.offered_bps / BPS_PER_MBPS, 6),
        "delivered": round(i.delivered_bps / BPS_PER_MBPS, 6),
        "dropped": round(i.dropped_bps / BPS_PER_MBPS, 6),
        "booked_share": round(i.booked_share, 6),
        "short": i.short,
        "reset": i.reset,
    }
