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
from braid.app.negotiation.volume_modify import VolumeChange
from braid.core.errors import InputError
from braid.core.rules.enforcement import Policing, parse_policing

__all__ = [
    "grpc_field",
    "grpc_modify_field",
    "volume_change_of",
    "volume_from_proto",
    "volume_modification_from_proto",
    "volume_to_proto",
]

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


# The same, as the ModifyQuery message spells them.
_MODIFY_FIELDS: Final = {"volume": "volume_bytes", "max_rate": "max_rate_bps"}


def grpc_modify_field(exc: InputError) -> InputError:
    return InputError(_MODIFY_FIELDS.get(exc.field, exc.field), exc.message)


def volume_change_of(q: pb.ModifyQuery) -> list[str]:
    """The volume fields a ModifyQuery sets."""
    given = (
        ("volume_bytes", q.volume_bytes),
        ("deadline", q.deadline),
        ("max_rate_bps", q.max_rate_bps),
    )
    return [name for name, value in given if value]


def volume_modification_from_proto(q: pb.ModifyQuery) -> VolumeChange:
    """A volume's modify (0: unchanged); a window field beside it is refused, naming it."""
    window = [
        name
        for name, given in (
            ("bandwidth_bps", q.bandwidth_bps != 0),
            ("window", q.HasField("window")),
            ("max_paths", q.max_paths != 0),
            ("strategy", q.strategy != pb.STRATEGY_UNSPECIFIED),
        )
        if given
    ]
    check_volume_only(window)
    return VolumeChange(q.volume_bytes or None, q.deadline or None, q.max_rate_bps or None)


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
            # What an earlier version carried before a modify first (no transaction now).
            steps=[pb.VolumeStep(start=s, end=e, rate_bps=r) for s, e, r in body.get("history", [])]
            + [_step_to_proto(body, i, step) for i, step in enumerate(body.get("steps", []))],
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
