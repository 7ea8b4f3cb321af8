"""The DomainAgent gRPC service: protobuf in, `AgentService` call, protobuf out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.agent import AgentError, AgentService
from braid.core.errors import InputError
from braid.core.negotiation.holds import Hold, HoldState, SegmentAsk

_T = TypeVar("_T")

STATUS_OF = {
    "MALFORMED": grpc.StatusCode.INVALID_ARGUMENT,
    "WINDOW_IN_PAST": grpc.StatusCode.INVALID_ARGUMENT,
    "BANDWIDTH_TOO_LARGE": grpc.StatusCode.OUT_OF_RANGE,
    "UNKNOWN_POINT": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_TOKEN": grpc.StatusCode.PERMISSION_DENIED,
    "UNKNOWN_TRANSACTION": grpc.StatusCode.NOT_FOUND,
    "BLIND_DOMAIN": grpc.StatusCode.FAILED_PRECONDITION,
    "CONFLICT": grpc.StatusCode.FAILED_PRECONDITION,
}
KIND_OF = {"site": pb.DOMAIN_KIND_SITE, "wan": pb.DOMAIN_KIND_WAN, "sdx": pb.DOMAIN_KIND_SDX}
STATE_OF = {
    HoldState.HELD: pb.HOLD_STATE_HELD,
    HoldState.COMMITTED: pb.HOLD_STATE_COMMITTED,
    HoldState.ABORTED: pb.HOLD_STATE_ABORTED,
    HoldState.EXPIRED: pb.HOLD_STATE_EXPIRED,
}


def _answer(context: Any, call: Callable[[], _T]) -> _T:
    """Run `call`; turn a rejected message into a gRPC error with the braid-error code."""
    try:
        return call()
    except AgentError as exc:
        code, message = exc.code, str(exc)
    except InputError as exc:
        code, message = "MALFORMED", str(exc)
    context.set_trailing_metadata((("braid-error", f"ERROR_CODE_{code}"),))
    context.abort(STATUS_OF[code], message)
    raise AssertionError("context.abort returns only by raising")  # pragma: no cover


class AgentServicer(pb_grpc.DomainAgentServicer):
    def __init__(self, service: AgentService) -> None:
        self.service = service

    def Describe(self, request: pb.DescribeQuery, context: Any) -> pb.DomainInfo:  # noqa: N802
        s = self.service
        return pb.DomainInfo(
            domain=s.domain, kind=KIND_OF[s.kind], visible=s.visible, points=sorted(s.points)
        )

    def RequestOffers(self, request: pb.ReqOffers, context: Any) -> pb.SendOffers:  # noqa: N802
        spans = [(s.entry, s.exit) for s in request.spans]
        values = _answer(
            context,
            lambda: self.service.offers(
                request.transaction_id,
                request.token,
                (request.window.start, request.window.end),
                spans,
                not request.directional,
            ),
        )
        return pb.SendOffers(
            transaction_id=request.transaction_id,
            token=request.token,
            domain=self.service.domain,
            offers=[
                pb.Offer(span=span, bandwidth_bps=value)
                for span, value in zip(request.spans, values, strict=True)
            ],
        )

    def Prepare(self, request: pb.ReservationPrep, context: Any) -> pb.PrepVote:  # noqa: N802
        segments = [
            SegmentAsk(s.span.entry, s.span.exit, s.bandwidth_bps, s.path_index)
            for s in request.segments
        ]
        vote = _answer(
            context,
            lambda: self.service.prepare(
                request.transaction_id,
                request.token,
                (request.window.start, request.window.end),
                segments,
                request.hold_seconds,
                not request.directional,
            ),
        )
        reply = pb.PrepVote(
            transaction_id=request.transaction_id,
            domain=self.service.domain,
            yes=vote.yes,
            token=request.token,
            reason=vote.reason,
        )
        if vote.hold is not None:
            reply.hold_expires_at = vote.hold.expires_at
            reply.vlans.extend(
                pb.VlanChoice(link=v.link, vlan=v.vlan, path_index=v.path_index)
                for v in vote.hold.vlans
            )
        return reply

    def CommitHold(self, request: pb.Commit, context: Any) -> pb.Ack:  # noqa: N802
        hold, changed = _answer(
            context, lambda: self.service.commit(request.transaction_id, request.token)
        )
        return pb.Ack(transaction_id=hold.transaction, state=STATE_OF[hold.state], changed=changed)

    def AbortHold(self, request: pb.Abort, context: Any) -> pb.Ack:  # noqa: N802
        hold, changed = _answer(
            context, lambda: self.service.abort(request.transaction_id, request.token)
        )
        return pb.Ack(transaction_id=hold.transaction, state=STATE_OF[hold.state], changed=changed)

    def Status(self, request: pb.StatusQuery, context: Any) -> pb.StatusReport:  # noqa: N802
        holds = _answer(context, lambda: self.service.status(request.transaction_id))
        return pb.StatusReport(
            domain=self.service.domain,
            transactions=[transaction_status(h) for h in holds],
            links=[
                pb.LinkPeak(
                    link=p.link, forward=p.forward, capacity_bps=p.capacity, peak_bps=p.peak
                )
                for p in self.service.peaks()
            ],
            now=self.service.now(),
        )


def transaction_status(hold: Hold) -> pb.TransactionStatus:
    return pb.TransactionStatus(
        transaction_id=hold.transaction,
        state=STATE_OF[hold.state],
        window=pb.Window(start=hold.start, end=hold.end),
        segments=[
            pb.Segment(
                span=pb.Span(entry=s.entry, exit=s.exit),
                bandwidth_bps=s.bandwidth,
                path_index=s.path_index,
            )
            for s in hold.segments
        ],
        hold_expires_at=hold.expires_at,
    )
