"""A sampled reservation's reports, one per direction, and the status they add up to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from braid.app.delivery.history import Sampled
from braid.core.delivery import DeliveryReport, DeliveryStatus, delivery_report
from braid.core.delivery.report import DEFAULT_FLOOR, DEFAULT_SUSTAIN

__all__ = ["DirectionDelivery", "ReservationDelivery", "overall", "reservation_delivery"]

# The worst first: a reservation is degraded when either direction is.
_RANK = (DeliveryStatus.DEGRADED, DeliveryStatus.OK, DeliveryStatus.IDLE, DeliveryStatus.UNMEASURED)


@dataclass(frozen=True, slots=True)
class DirectionDelivery:
    sender: str
    receiver: str
    report: DeliveryReport


@dataclass(frozen=True, slots=True)
class ReservationDelivery:
    """What one reservation's traffic got, both ways, against its booked rate."""

    reservation_id: str
    booked_bps: int
    status: DeliveryStatus
    directions: tuple[DirectionDelivery, ...]  # src -> dst, then back; none if never sampled


def overall(statuses: Sequence[DeliveryStatus]) -> DeliveryStatus:
    """Degraded if a direction is; else ok if one carries its booked rate; else idle."""
    return min(statuses, key=_RANK.index, default=DeliveryStatus.UNMEASURED)


def reservation_delivery(
    reservation_id: str,
    booked_bps: int,
    sampled: Sampled | None,
    *,
    floor: float = DEFAULT_FLOOR,
    sustain: int = DEFAULT_SUSTAIN,
) -> ReservationDelivery:
    """The report of `sampled` (None: never sampled, so unmeasured)."""
    if sampled is None:
        return ReservationDelivery(reservation_id, booked_bps, DeliveryStatus.UNMEASURED, ())
    booked = sampled.booked_bps
    ways = (
        DirectionDelivery(
            sampled.sender,
            sampled.receiver,
            delivery_report(sampled.forward, booked, floor=floor, sustain=sustain),
        ),
        DirectionDelivery(
            sampled.receiver,
            sampled.sender,
            delivery_report(sampled.reverse, booked, floor=floor, sustain=sustain),
        ),
    )
    return ReservationDelivery(
        reservation_id, booked, overall([w.report.status for w in ways]), ways
    )
