"""The DomainAgent gRPC service (asyncio): protobuf in, `AgentService` call, protobuf out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, NoReturn, TypeVar, cast

import grpc

from braid.adapters.rpc.published_views import KIND_OF, part_to_pb
from braid.adapters.rpc.switch_plans import WirePlans
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.agent.messages import (
    AbortCall,
    AgentCall,
    AgentError,
    CommitCall,
    OffersCall,
    Outcome,
    PrepCall,
    ReleaseCall,
    SpanOffer,
    Vote,
)
from braid.app.agent.peers import Caller, admit
from braid.app.agent.service import AgentService
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
    "UNAUTHENTICATED": grpc.StatusCode.UNAUTHENTICATED,
    "POLICY": grpc.StatusCode.PERMISSION_DENIED,
    "UNDECIDED": grpc.StatusCode.UNAVAILABLE,
}
MAX_BATCH = 256
STATE_OF = {
    HoldState.HELD: pb.HOLD_STATE_HELD,
    HoldState.COMMITTED: pb.HOLD_STATE_COMMITTED,
    HoldState.ABORTED: pb.HOLD_STATE_ABORTED,
    HoldState.EXPIRED: pb.HOLD_STATE_EXPIRED,
    HoldState.RELEASED: pb.HOLD_STATE_RELEASED,
}


class Rejected(Exception):  # noqa: N818 - the answer, not a failure of the agent
    """A message the agent turns down: the gRPC status and the braid-error code to send."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _answer(call: Callable[[], _T]) -> _T:
    """Run `call`; a rejected message raises Rejected with its braid-error code."""
    try:
        return call()
    except AgentError as exc:
        raise Rejected(exc.code, str(exc)) from exc
    except InputError as exc:
        raise Rejected("MALFORMED", str(exc)) from exc


async def _abort(context: Any, rejected: Rejected) -> NoReturn:
    await context.abort(
        STATUS_OF[rejected.code],
        rejected.message,
        trailing_metadata=(("braid-error", f"ERROR_CODE_{rejected.code}"),),
    )
    raise AssertionError("context.abort returns only by raising")  # pragma: no cover


async def _answered(context: Any, call: Callable[[], _T]) -> _T:
    """What `call` answers, or the call aborted with the reason it was rejected."""
    try:
        return _answer(call)
    except Rejected as rejected:
        await _abort(context, rejected)


def caller_of(context: Any) -> Caller:
    """The caller as the transport knows it: the names of its client certificate (gRPC
    puts them in the auth context only once the handshake verified it against the CA)
    and the bearer token of its `authorization` metadata."""
    names: list[str] = []
    auth = context.auth_context() or {}
    for key in ("x509_common_name", "x509_subject_alternative_name"):
        names += [v.decode("utf-8", "replace") for v in auth.get(key, ())]
    token = None
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            token = value[len("Bearer ") :].strip()
    return Caller(tuple(dict.fromkeys(names)), token)


class AgentServicer(pb_grpc.DomainAgentServicer):
    """The agent's gRPC methods, served from one asyncio event loop (`grpc.aio`).

    Each message is handled in the loop's thread as it arrives: the service's
    work is short and takes the service's lock, so handing it to a pool
    thread would only add a switch per message.
    """

    def __init__(self, service: AgentService) -> None:
        self.service = service

    def caller(self, context: Any) -> Caller | None:
        """Who calls, when the agent's policy asks (an open agent does not look)."""
        return None if self.service.policy is None else caller_of(context)

    async def _admitted(self, context: Any) -> None:
        """Only a known peer, when the agent has a policy (a token or a peer file), may call."""
        policy = self.service.policy
        if policy is not None:
            await _answered(context, lambda: admit(policy, caller_of(context), self.service.domain))

    async def _decided(self, calls: Sequence[AgentCall], context: Any) -> dict[str, str | None]:
        """The coordinators' decisions for the Commits among `calls`, asked together off
        the loop (a Commit needs its coordinator's commit decision); only a known peer's
        Commits are worth a question."""
        service = self.service
        holds = service.commit_questions(calls)
        if not holds:
            return {}
        await self._admitted(context)
        loop = asyncio.get_running_loop()
        answers = await asyncio.gather(
            *(loop.run_in_executor(None, service.ask, hold) for hold in holds)
        )
        return {h.transaction: a for h, a in zip(holds, answers, strict=True)}

    async def Describe(self, request: pb.DescribeQuery, context: Any) -> pb.DomainInfo:  # noqa: N802
        await self._admitted(context)
        s = self.service
        return pb.DomainInfo(
            domain=s.domain, kind=KIND_OF[s.kind], visible=s.visible, points=sorted(s.points)
        )

    async def View(self, request: pb.ViewQuery, context: Any) -> pb.DomainView:  # noqa: N802
        await self._admitted(context)
        return part_to_pb(self.service.part)

    async def _one(self, call: AgentCall, context: Any) -> object:
        """The answer to one message alone (a batch of one)."""
        decided = await self._decided([call], context)
        return await _answered(
            context,
            lambda: self.service.exchange([call], self.caller(context), decided)[0].value(),
        )

    async def RequestOffers(self, request: pb.ReqOffers, context: Any) -> pb.SendOffers:  # noqa: N802
        values = await self._one(offers_call(request), context)
        return self.send_offers(request, cast(Sequence[int | SpanOffer], values))

    async def Prepare(self, request: pb.ReservationPrep, context: Any) -> pb.PrepVote:  # noqa: N802
        vote = await self._one(prep_call(request), context)
        return self.prep_vote(request, cast(Vote, vote))

    async def CommitHold(self, request: pb.Commit, context: Any) -> pb.Ack:  # noqa: N802
        return await self._settle(commit_call(request, self.service.domain), context)

    async def AbortHold(self, request: pb.Abort, context: Any) -> pb.Ack:  # noqa: N802
        return await self._settle(AbortCall(request.transaction_id, request.token), context)

    async def ReleaseHold(self, request: pb.Release, context: Any) -> pb.Ack:  # noqa: N802
        return await self._settle(ReleaseCall(request.transaction_id, request.token), context)

    async def _settle(self, call: AgentCall, context: Any) -> pb.Ack:
        answer = await self._one(call, context)
        return ack(*cast(tuple[Hold, bool], answer))

    def send_offers(
        self, request: pb.ReqOffers, values: Sequence[int | SpanOffer]
    ) -> pb.SendOffers:
        return pb.SendOffers(
            transaction_id=request.transaction_id,
            token=request.token,
            domain=self.service.domain,
            offers=[
                offer_message(span, value)
                for span, value in zip(request.spans, values, strict=True)
            ],
        )

    def prep_vote(self, request: pb.ReservationPrep, vote: Vote) -> pb.PrepVote:
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

    async def Exchange(self, request: pb.AgentBatch, context: Any) -> pb.AgentBatchReply:  # noqa: N802
        return await self.exchange_one(request, context)

    def calls(self, request: pb.AgentBatch) -> list[AgentCall | AgentError]:
        """A batch's messages as calls (or why an item is none); Rejected when too many."""
        items = request.items
        if not 0 < len(items) <= MAX_BATCH:
            raise Rejected("MALFORMED", f"items: a batch holds 1-{MAX_BATCH} messages")
        return [call_of(item, self.service.domain) for item in items]

    def batch(
        self,
        request: pb.AgentBatch,
        context: Any,
        decided: dict[str, str | None] | None = None,
        calls: list[AgentCall | AgentError] | None = None,
    ) -> pb.AgentBatchReply:
        """One batch's replies, in order; raises Rejected when the whole batch is."""
        items = request.items
        if calls is None:
            calls = self.calls(request)
        valid = [c for c in calls if not isinstance(c, AgentError)]
        outcomes = iter(
            _answer(lambda: self.service.exchange(valid, self.caller(context), decided))
        )
        reply = pb.AgentBatchReply()
        for item, call in zip(items, calls, strict=True):
            result = reply.results.add()
            outcome = Outcome(None, call) if isinstance(call, AgentError) else next(outcomes)
            if outcome.error is not None:
                error = outcome.error
                result.error.code = pb.ErrorCode.Value(f"ERROR_CODE_{error.code}")
                result.error.status = STATUS_OF[error.code].name
                result.error.message = str(error)
            elif item.HasField("offers"):
                result.offers.CopyFrom(
                    self.send_offers(item.offers, cast(Sequence[int | SpanOffer], outcome.answer))
                )
            elif item.HasField("prep"):
                result.vote.CopyFrom(self.prep_vote(item.prep, cast(Vote, outcome.answer)))
            else:
                hold, changed = cast(tuple[Hold, bool], outcome.answer)
                result.ack.CopyFrom(ack(hold, changed))
        return reply

    async def ExchangeStream(  # noqa: N802
        self, requests: AsyncIterator[pb.AgentBatch], context: Any
    ) -> AsyncIterator[pb.AgentBatchReply]:
        # One stream per orchestrator: no call set-up per batch. A rejected batch ends
        # the stream (as `Exchange` aborts its call). A caller that is no known peer is
        # turned away before anything is read.
        policy = self.service.policy
        if policy is not None:
            await _answered(context, lambda: admit(policy, caller_of(context), self.service.domain))
        # Admitted: said at once, so the caller writes only to a stream it knows is open
        # (a write racing a refusal would make gRPC report INTERNAL instead of its reason).
        await context.send_initial_metadata(())
        async for request in requests:
            yield await self.exchange_one(request, context)

    async def exchange_one(self, request: pb.AgentBatch, context: Any) -> pb.AgentBatchReply:
        """One batch, alone (`Exchange`) or on a stream (the fault servicer slows or ends
        some)."""
        calls = await _answered(context, lambda: self.calls(request))
        valid = [c for c in calls if not isinstance(c, AgentError)]
        decided = await self._decided(valid, context)
        return await _answered(context, lambda: self.batch(request, context, decided, calls))

    async def Status(self, request: pb.StatusQuery, context: Any) -> pb.StatusReport:  # noqa: N802
        await self._admitted(context)
        holds = await _answered(context, lambda: self.service.status(request.transaction_id))
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


def offers_call(r: pb.ReqOffers) -> OffersCall:
    spans = tuple((s.entry, s.exit) for s in r.spans)
    return OffersCall(
        r.transaction_id,
        r.token,
        (r.window.start, r.window.end),
        spans,
        not r.directional,
        replaces_of(r.replaces),
        over_time=r.over_time,
        also_replaces=all_replaced(r.replaces_all),
    )


def offer_message(span: pb.Span, value: int | SpanOffer) -> pb.Offer:
    """One span's Offer; with its steps when the agent answered over time."""
    if isinstance(value, int):
        return pb.Offer(span=span, bandwidth_bps=value)
    steps = [pb.OfferStep(start=a, end=b, bandwidth_bps=bw) for a, b, bw in value.steps]
    return pb.Offer(span=span, bandwidth_bps=value.bandwidth, steps=steps)


def prep_call(r: pb.ReservationPrep) -> PrepCall:
    segments = tuple(
        SegmentAsk(s.span.entry, s.span.exit, s.bandwidth_bps, s.path_index) for s in r.segments
    )
    window = (r.window.start, r.window.end)
    return PrepCall(
        r.transaction_id,
        r.token,
        window,
        segments,
        r.hold_seconds,
        not r.directional,
        r.coordinator,
        replaces_of(r.replaces),
        all_replaced(r.replaces_all),
    )


def replaces_of(r: pb.Replaces) -> tuple[str, str] | None:
    return (r.transaction_id, r.token) if r.transaction_id else None


def all_replaced(many: Iterable[pb.Replaces]) -> tuple[tuple[str, str], ...]:
    return tuple((r.transaction_id, r.token) for r in many if r.transaction_id)


def commit_call(r: pb.Commit, domain: str) -> CommitCall:
    return CommitCall(r.transaction_id, r.token, WirePlans(r.switches, domain))


def call_of(item: pb.AgentMessage, domain: str) -> AgentCall | AgentError:
    """The batch item as a call to `domain`'s agent, or why it cannot be one."""
    kind = item.WhichOneof("message")
    if kind == "offers":
        return offers_call(item.offers)
    if kind == "prep":
        return prep_call(item.prep)
    if kind == "commit":
        return commit_call(item.commit, domain)
    if kind == "abort":
        return AbortCall(item.abort.transaction_id, item.abort.token)
    if kind == "release":
        return ReleaseCall(item.release.transaction_id, item.release.token)
    return AgentError("MALFORMED", "items", "an item carries no message")


def ack(hold: Hold, changed: bool) -> pb.Ack:
    return pb.Ack(transaction_id=hold.transaction, state=STATE_OF[hold.state], changed=changed)


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
