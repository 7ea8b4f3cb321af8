"""The Orchestrator gRPC service (user -> orchestrator): Reservation in, ReservationResp out."""

from __future__ import annotations

from typing import Any

import grpc

from braid.adapters.rpc.switch_plans import plan_to_pb
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.negotiation.modification import Modification
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationRequest, NegotiationResult
from braid.core.errors import BraidError, InputError
from braid.core.negotiation.strategies import Strategy

STRATEGY_OF: dict[int, Strategy | None] = {
    pb.STRATEGY_UNSPECIFIED: None,
    pb.STRATEGY_EQUAL_SPLIT: "equal-split",
    pb.STRATEGY_PARTIAL_OFFERS: "partial-offers",
    pb.STRATEGY_FULL_OFFERS: "full-offers",
}

OUTCOME_OF = {
    "pending": pb.OUTCOME_PENDING,
    "commit": pb.OUTCOME_COMMIT,
    "abort": pb.OUTCOME_ABORT,
}


class OrchestratorServicer(pb_grpc.OrchestratorServicer):
    def __init__(self, orchestrator: Orchestrator) -> None:
        self.orchestrator = orchestrator

    def Reserve(self, request: pb.Reservation, context: Any) -> pb.ReservationResp:  # noqa: N802
        try:
            result = self.orchestrator.reserve(request_from_proto(request))
        except InputError as exc:
            context.set_trailing_metadata((("braid-error", "ERROR_CODE_MALFORMED"),))
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise AssertionError("context.abort raises") from exc  # pragma: no cover
        return result_to_proto(result)

    def Lookup(self, request: pb.ReservationQuery, context: Any) -> pb.ReservationResp:  # noqa: N802
        result = self.orchestrator.lookup(request.id)
        if result is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown reservation {request.id!r}")
            raise AssertionError("context.abort raises")  # pragma: no cover
        return result_to_proto(result)

    def Cancel(self, request: pb.CancelQuery, context: Any) -> pb.ReservationResp:  # noqa: N802
        try:
            result = self.orchestrator.cancel(request.id)
        except BraidError as exc:  # being negotiated right now
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            raise AssertionError("context.abort raises") from exc  # pragma: no cover
        if result is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown reservation {request.id!r}")
            raise AssertionError("context.abort raises")  # pragma: no cover
        return result_to_proto(result)

    def Modify(self, request: pb.ModifyQuery, context: Any) -> pb.ReservationResp:  # noqa: N802
        try:
            result = self.orchestrator.modify(request.id, modification_from_proto(request))
        except InputError as exc:
            context.set_trailing_metadata((("braid-error", "ERROR_CODE_MALFORMED"),))
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise AssertionError("context.abort raises") from exc  # pragma: no cover
        except BraidError as exc:  # not committed, or being negotiated right now
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            raise AssertionError("context.abort raises") from exc  # pragma: no cover
        if result is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown reservation {request.id!r}")
            raise AssertionError("context.abort raises")  # pragma: no cover
        if not result.success:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"not modified: {result.reason}")
            raise AssertionError("context.abort raises")  # pragma: no cover
        return result_to_proto(result)

    def Decide(self, request: pb.DecisionQuery, context: Any) -> pb.DecisionReply:  # noqa: N802
        try:
            outcome = self.orchestrator.decision(
                request.transaction_id, request.token, request.domain
            )
        except InputError as exc:
            context.set_trailing_metadata((("braid-error", "ERROR_CODE_BAD_TOKEN"),))
            context.abort(grpc.StatusCode.PERMISSION_DENIED, str(exc))
            raise AssertionError("context.abort raises") from exc  # pragma: no cover
        return pb.DecisionReply(transaction_id=request.transaction_id, outcome=OUTCOME_OF[outcome])


def request_from_proto(r: pb.Reservation) -> NegotiationRequest:
    if r.strategy not in STRATEGY_OF:
        raise InputError("strategy", f"unknown strategy {r.strategy}")
    return NegotiationRequest(
        id=r.id,
        src_domain=r.source.domain,
        src_point=r.source.point,
        dst_domain=r.destination.domain,
        dst_point=r.destination.point,
        bandwidth=r.bandwidth_bps,
        start=r.window.start,
        end=r.window.end,
        strategy=STRATEGY_OF[r.strategy],
        max_paths=r.max_paths,
        symmetric=not r.directional,
    )


def modification_from_proto(q: pb.ModifyQuery) -> Modification:
    if q.strategy not in STRATEGY_OF:
        raise InputError("strategy", f"unknown strategy {q.strategy}")
    window = q.window if q.HasField("window") else pb.Window()
    return Modification(
        bandwidth=q.bandwidth_bps or None,
        start=window.start or None,
        end=window.end or None,
        max_paths=q.max_paths or None,
        strategy=STRATEGY_OF[q.strategy],
    )


def result_to_proto(result: NegotiationResult) -> pb.ReservationResp:
    return pb.ReservationResp(
        id=result.id,
        success=result.success,
        reason=result.reason,
        transaction_id=result.transaction,
        paths=[
            pb.PathShare(
                segments=[
                    pb.PathSegment(domain=leg.domain, span=pb.Span(entry=leg.entry, exit=leg.exit))
                    for leg in path.legs
                ],
                bandwidth_bps=path.bandwidth,
                vlans=[pb.VlanChoice(link=link, vlan=vlan) for link, vlan in path.vlans],
            )
            for path in result.paths
        ],
        trace=[pb.TraceEvent(phase=e.phase, domain=e.domain, text=e.text) for e in result.trace],
        switches=[plan_to_pb(sw) for sw in result.switches],
        status=result.state,
        holdings=[pb.DomainHolding(domain=d, state=state) for d, state in result.holdings],
    )
