"""The Orchestrator gRPC service (asyncio; user -> orchestrator): Reservation in,
ReservationResp out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from braid.adapters.rpc.switch_plans import plan_to_pb
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.adapters.rpc.volumes import (
    grpc_field,
    grpc_modify_field,
    volume_change_of,
    volume_from_proto,
    volume_modification_from_proto,
    volume_to_proto,
)
from braid.app.errors import AuthError, ForbiddenError, NotFoundError
from braid.app.loop_waits import in_greenlet
from braid.app.negotiation.modification import Modification
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationRequest, NegotiationResult
from braid.app.negotiation.volume import VolumeOutcome
from braid.app.orchestrator_access import (
    Credentials,
    Identities,
    IdTakenError,
    OwnedOrchestrator,
)
from braid.app.records import User
from braid.core.errors import BraidError, InputError
from braid.core.negotiation.strategies import Strategy
from braid.core.rules.enforcement import Policing, parse_policing

_Reply = TypeVar("_Reply")
_Found = TypeVar("_Found")
# Calls under way (the loop keeps only weak references to its tasks).
_RUNNING: set[asyncio.Future[Any]] = set()
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


class Refused(Exception):  # noqa: N818 - the answer, not a failure of the orchestrator
    """A call the orchestrator turns down: the gRPC status, and a braid-error code if any."""

    def __init__(self, status: grpc.StatusCode, message: str, error: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.error = status, message, error


class OrchestratorServicer(pb_grpc.OrchestratorServicer):
    """The Orchestrator service, served from the event loop of the agents' streams: each
    call runs in a greenlet there (`in_greenlet`), so a negotiation waits for its agents
    without a thread of its own and without blocking the others.

    Reserve, Lookup, Cancel and Modify are a user's (`identities` names the caller,
    `owned` keeps to its own reservations); Decide is a participant's, which proves
    itself with the transaction's token (only the orchestrator and the domains it
    sent it to know it)."""

    def __init__(
        self, orchestrator: Orchestrator, owned: OwnedOrchestrator, identities: Identities
    ) -> None:
        self.orchestrator = orchestrator
        self.owned = owned
        self.identities = identities

    async def Reserve(self, request: pb.Reservation, context: Any) -> pb.ReservationResp:  # noqa: N802
        return await _answer(context, self._as_user(context, self._reserve), request)

    async def Lookup(self, request: pb.ReservationQuery, context: Any) -> pb.ReservationResp:  # noqa: N802
        return await _answer(context, self._as_user(context, self._lookup), request)

    async def Cancel(self, request: pb.CancelQuery, context: Any) -> pb.ReservationResp:  # noqa: N802
        return await _answer(context, self._as_user(context, self._cancel), request)

    async def Modify(self, request: pb.ModifyQuery, context: Any) -> pb.ReservationResp:  # noqa: N802
        return await _answer(context, self._as_user(context, self._modify), request)

    async def Decide(self, request: pb.DecisionQuery, context: Any) -> pb.DecisionReply:  # noqa: N802
        return await _answer(context, self._decide, request)

    def _as_user(
        self, context: Any, call: Callable[[User, Any], _Reply]
    ) -> Callable[[Any], _Reply]:
        """`call` for the user the caller's credentials name; the refusals as statuses."""
        credentials = credentials_of(context)

        def run(request: Any) -> _Reply:
            try:
                return call(self.identities.user(credentials), request)
            except AuthError as exc:
                raise Refused(grpc.StatusCode.UNAUTHENTICATED, str(exc)) from exc
            except ForbiddenError as exc:
                raise Refused(grpc.StatusCode.PERMISSION_DENIED, str(exc)) from exc
            except NotFoundError as exc:
                raise Refused(grpc.StatusCode.NOT_FOUND, str(exc)) from exc
            except IdTakenError as exc:
                raise Refused(grpc.StatusCode.ALREADY_EXISTS, str(exc)) from exc

        return run

    def _reserve(self, user: User, request: pb.Reservation) -> pb.ReservationResp:
        if request.HasField("volume"):
            return self._reserve_volume(user, request)
        try:
            result = self.owned.reserve(user, request_from_proto(request))
        except InputError as exc:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "MALFORMED") from exc
        return result_to_proto(result)

    def _reserve_volume(self, user: User, request: pb.Reservation) -> pb.ReservationResp:
        """A volume: committed or refused (with the most by the deadline) is an answer."""
        try:
            stored = self.owned.reserve_volume(user, volume_from_proto(request))
        except InputError as exc:
            refusal = str(grpc_field(exc))
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, refusal, "MALFORMED") from exc
        return volume_to_proto(stored)

    def _lookup(self, user: User, request: pb.ReservationQuery) -> pb.ReservationResp:
        volume = self.owned.volume(user, request.id)
        if volume is not None:
            return volume_to_proto(volume)
        return result_to_proto(self.owned.lookup(user, request.id))

    def _cancel(self, user: User, request: pb.CancelQuery) -> pb.ReservationResp:
        if self.owned.volume(user, request.id) is not None:
            return volume_to_proto(self._cancel_volume(user, request.id))
        try:
            result = self.owned.cancel(user, request.id)
        except (NotFoundError, IdTakenError):
            raise
        except BraidError as exc:  # being negotiated right now
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, str(exc)) from exc
        if result is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, f"unknown reservation {request.id!r}")
        return result_to_proto(result)

    def _cancel_volume(self, user: User, reservation: str) -> dict[str, Any]:
        stored = self.owned.cancel_volume(user, reservation)
        if stored is None:  # not a volume (any more): as for an id nobody used
            raise Refused(grpc.StatusCode.NOT_FOUND, f"unknown reservation {reservation!r}")
        return stored

    def _modify(self, user: User, request: pb.ModifyQuery) -> pb.ReservationResp:
        if self.owned.volume(user, request.id) is not None:
            return self._modify_volume(user, request)
        if any(volume_change_of(request)):
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{volume_change_of(request)[0]}: only a volume reservation has it",
                "MALFORMED",
            )

        def modify() -> NegotiationResult | None:
            return self.owned.modify(user, request.id, modification_from_proto(request))

        result = _modified(request.id, modify)
        if not result.success:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, f"not modified: {result.reason}")
        return result_to_proto(result)

    def _modify_volume(self, user: User, request: pb.ModifyQuery) -> pb.ReservationResp:
        """A volume's new deadline, volume or rate cap; the new version, or
        FAILED_PRECONDITION with the reason (and the most by the deadline)."""

        def modify() -> tuple[VolumeOutcome, dict[str, Any]] | None:
            change = volume_modification_from_proto(request)
            return self.owned.modify_volume(user, request.id, change)

        outcome, stored = _modified(request.id, modify, grpc_modify_field)
        if not outcome.success:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, f"not modified: {outcome.reason}")
        return volume_to_proto(stored)

    def _decide(self, request: pb.DecisionQuery) -> pb.DecisionReply:
        try:
            outcome = self.orchestrator.decision(
                request.transaction_id, request.token, request.domain
            )
        except InputError as exc:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, str(exc), "BAD_TOKEN") from exc
        return pb.DecisionReply(transaction_id=request.transaction_id, outcome=OUTCOME_OF[outcome])


def _modified(
    reservation: str,
    call: Callable[[], _Found | None],
    field: Callable[[InputError], InputError] = lambda exc: exc,
) -> _Found:
    """A modify's answer, its refusals as statuses (`field`: the field as the message
    spells it); the old version stands after any of them."""
    try:
        found = call()
    except InputError as exc:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(field(exc)), "MALFORMED") from exc
    except (NotFoundError, IdTakenError):
        raise
    except BraidError as exc:  # not committed, or being negotiated right now
        raise Refused(grpc.StatusCode.FAILED_PRECONDITION, str(exc)) from exc
    if found is None:
        raise Refused(grpc.StatusCode.NOT_FOUND, f"unknown reservation {reservation!r}")
    return found


def credentials_of(context: Any) -> Credentials:
    """The caller's verified certificate names (gRPC fills the auth context only once the
    handshake checked the certificate against the CA) and its `authorization` metadata."""
    names: list[str] = []
    auth = context.auth_context() or {}
    for key in ("x509_common_name", "x509_subject_alternative_name"):
        names += [v.decode("utf-8", "replace") for v in auth.get(key, ())]
    authorization = None
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            authorization = value
    return Credentials(tuple(dict.fromkeys(names)), authorization)


async def _answer(context: Any, call: Callable[[Any], _Reply], request: Any) -> _Reply:
    """`call(request)` in a greenlet; a refusal ends the call with its status.

    A caller that gives up (its deadline, a cancel) ends only its call: the
    negotiation runs to its end all the same, as the two-phase commit needs
    (a transaction left half way would keep its holds waiting for a decision).
    """
    work = asyncio.ensure_future(in_greenlet(call, request))
    _RUNNING.add(work)
    work.add_done_callback(_RUNNING.discard)
    try:
        return await asyncio.shield(work)
    except Refused as refused:
        trailing = (("braid-error", f"ERROR_CODE_{refused.error}"),) if refused.error else ()
        await context.abort(refused.status, refused.message, trailing_metadata=trailing)
        raise AssertionError("context.abort raises") from refused  # pragma: no cover


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
        policing=parse_policing(r.policing or Policing.SOFT.value),
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
