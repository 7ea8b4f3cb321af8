"""Volume reservations over the Orchestrator service: `Reservation.volume` in, and the
stored reservation (`lookup_volume`'s answer) out as `ReservationResp.volume`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from braid.adapters.rpc.switch_plans import plan_to_pb
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.interdomain_volume import check_volume_only
from braid.app.negotiation.volume import VolumeRequest
from braid.app.negotiation.volume_log import step_plan
from braid.core.errors import InputError
from braid.core.rules.enforcement import Policing, parse_policing

__all__ = ["grpc_field", "volume_from_proto", "volume_to_proto"]

# The volume checks' field names (REST's), as the Reservation message spells them.
_FIELDS: Final = {
    "volume": "volume.bytes",
    "not_before": "volume.not_before",
    "deadline": "volume.deadline",
    "max_rate": "volume.max_rate_bps",
}


def grpc_field(exc: InputError) -> InputError:
    """The same refusal, naming the field as the Reservation message spells it."""
    return InputError(_FIELDS.get(exc.field, exc.field), exc.message)


def volume_from_proto(r: pb.Reservation) -> VolumeRequest:
    """A Reservation with `volume` set; a window field beside it is refused, naming it.
    not_before 0 stays 0 (now, as the caller's way in reads it)."""
    window = [
        name
        for name, given in (
            ("bandwidth_bps", r.bandwidth_bps != 0),
            ("window", r.HasField("window")),
            ("strategy", r.strategy != pb.STRATEGY_UNSPECIFIED),
        )
        if given
    ]
    check_volume_only(window)
    v = r.volume
    return VolumeRequest(
        r.id,
        r.source.domain,
        r.source.point,
        r.destination.domain,
        r.destination.point,
        v.bytes,
        v.not_before,
        v.deadline,
        r.max_paths,
        v.max_rate_bps or None,
        symmetric=not r.directional,
        policing=parse_policing(r.policing or Policing.SOFT.value),
    )


def volume_to_proto(body: Mapping[str, Any]) -> pb.ReservationResp:
    """A stored volume reservation (committed, cancelled or failed) as the reply."""
    status = body["status"]
    return pb.ReservationResp(
        id=body["id"],
        success=status == "committed",
        reason=body.get("reason", ""),
        transaction_id=body.get("transaction", ""),
        status=status,
        volume=pb.VolumeProfile(
            bytes=body["volume_bytes"],
            not_before=body["not_before"],
            deadline=body["deadline"],
            completion=body.get("completion") or 0,
            paths=[pb.DomainPath(domains=domains) for domains in body.get("paths", [])],
            steps=[_step_to_proto(body, i, step) for i, step in enumerate(body.get("steps", []))],
            most_by_deadline_bytes=body.get("most_by_deadline") or 0,
            earliest_completion=body.get("earliest_completion") or 0,
        ),
    )


def _step_to_proto(body: Mapping[str, Any], index: int, step: Mapping[str, Any]) -> pb.VolumeStep:
    transactions = body.get("step_transactions", [])
    tx = transactions[index] if index < len(transactions) else ""
    rates = [int(r) for r in step["path_rates"]]
    return pb.VolumeStep(
        start=step["start"],
        end=step["end"],
        rate_bps=sum(rates),
        path_rates_bps=rates,
        transaction_id=tx,
        switches=[plan_to_pb(plan) for plan in step_plan(body, tx)],
    )
