"""A volume across domains: offers over time, a rate profile, one decision for every step.

The visible domains on the candidate domain paths are asked for their
offers over time (ReqOffers.over_time) across [not_before, horizon); the
core (`volume_offers.compose_volume`) turns them into steps of constant
per-path rates. Each step is a sub-transaction ``{transaction}.s{i}``: one
ReservationPrep per domain per step, window = the step, all sent together.
The decision covers every step: COMMIT only when every vote of every step
is yes. All the steps' decisions are one write to the decision log
(`DecisionLog.save(..., also=...)`, one SQLite transaction, synced) before
any Commit or Abort leaves, so a crash can never leave some steps committed
and others aborted; on restart each sub-transaction is finished from the
log like any other.
"""

from __future__ import annotations

import itertools
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from braid.app.agent.messages import OffersCall, PrepCall, SpanOffer
from braid.app.negotiation.context import RunContext
from braid.app.negotiation.ports import CallFailedError, Pending, PrepReply
from braid.app.negotiation.results import GRACE_SECONDS, TraceEvent, check_ends
from braid.app.negotiation.volume_log import VOLUME_KIND, is_volume_body, step_plans_body
from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.negotiation.holds import SegmentAsk
from braid.core.negotiation.result_rules import CommittedPath, SwitchPlan
from braid.core.negotiation.routes import Leg
from braid.core.negotiation.strategies import Offer
from braid.core.negotiation.transaction import RELEASE_LABEL, Decision, Transaction, Vote
from braid.core.negotiation.volume_offers import (
    OfferStep,
    RateStep,
    VolumeRefusal,
    compose_volume,
)
from braid.core.rules.enforcement import Policing
from braid.core.volume.profile import BITS_PER_BYTE

__all__ = [
    "VolumeOutcome",
    "VolumeRequest",
    "cancel_stored",
    "cancel_volume",
    "lookup_volume",
    "reserve_volume",
    "step_transaction",
]

Spans = dict[str, list[tuple[int, str, str]]]


@dataclass(frozen=True, slots=True)
class VolumeRequest:
    """Move `volume_bytes` from one site point to another within [not_before, deadline)."""

    id: str
    src_domain: str
    src_point: str
    dst_domain: str
    dst_point: str
    volume_bytes: int
    not_before: int
    deadline: int
    max_paths: int = 0  # 0: the orchestrator's default
    max_rate: int | None = None  # bit/s, the most the hosts send at once
    symmetric: bool = True
    # Every step's rules hold the step's rates as a window's would (way_rates).
    policing: Policing = Policing.SOFT


@dataclass
class VolumeOutcome:
    """A committed profile (its steps, per candidate path), or why not."""

    request: VolumeRequest
    success: bool
    reason: str
    transaction: str
    token: str
    steps: tuple[RateStep, ...] = ()
    legs: tuple[tuple[Leg, ...], ...] = ()
    most_by_deadline: int = 0  # bytes
    earliest_completion: int | None = None
    transactions: tuple[Transaction, ...] = ()
    # Each step's SDX/edge rules, in step order (committed only): its Commits carry them.
    plans: tuple[tuple[SwitchPlan, ...], ...] = ()
    trace: list[TraceEvent] = field(default_factory=list)

    @property
    def completion(self) -> int | None:
        return self.steps[-1].end if self.steps else None


def step_transaction(transaction: str, index: int) -> str:
    """Step `index`'s sub-transaction (agents take only A-Z a-z 0-9 . _ : - in an id)."""
    return f"{transaction}.s{index}"


def reserve_volume(context: RunContext, request: VolumeRequest) -> VolumeOutcome:
    """Negotiate `request` with the domains (see the module's note for the protocol)."""
    _check(context, request)
    if context.decisions.result(request.id) is not None:
        raise InputError("id", f"reservation {request.id!r} already exists")
    return _remember_failure(context, _negotiate(context, request))


def _negotiate(context: RunContext, request: VolumeRequest) -> VolumeOutcome:
    run = VolumeOutcome(request, False, "", uuid.uuid4().hex, secrets.token_urlsafe(24))
    k = request.max_paths or context.config.max_paths
    route = (request.src_domain, request.src_point, request.dst_domain, request.dst_point, k)
    paths, legs = context.caches.routes(route)
    if not paths:
        return _fail(run, f"no domain path joins {request.src_domain} and {request.dst_domain}")
    run.legs = tuple(legs[: len(paths)])
    spans = _spans_by_domain(run.legs)
    horizon = request.deadline + (request.deadline - request.not_before)
    with context.agents.negotiating(set(spans)):
        timelines = _offers_over_time(context, run, spans, horizon)
        bits = request.volume_bytes * BITS_PER_BYTE
        composed = compose_volume(
            bits,
            paths,
            timelines,
            request.not_before,
            request.deadline,
            horizon=horizon,
            max_rate=request.max_rate,
        )
        if isinstance(composed, VolumeRefusal):
            run.most_by_deadline = composed.most_by_deadline // BITS_PER_BYTE
            run.earliest_completion = composed.earliest_completion
            return _fail(run, _refusal_reason(composed, run))
        run.steps = composed.steps
        return _commit_steps(context, run)


def _remember_failure(context: RunContext, run: VolumeOutcome) -> VolumeOutcome:
    """A refusal is kept too (nothing is held), so a lookup tells why."""
    if not run.success:
        body = {
            **volume_body(run),
            "status": "failed",
            "reason": run.reason,
            "most_by_deadline": run.most_by_deadline,
            "earliest_completion": run.earliest_completion,
        }
        context.decisions.save_result(run.request.id, body)
    return run


def cancel_volume(context: RunContext, outcome: VolumeOutcome) -> None:
    """Release every committed step in every domain (each decided durably first)."""
    for tx in outcome.transactions:
        if tx.decision is Decision.COMMIT:
            context.delivery.release(tx, "cancelled", outcome.trace.append)


def volume_body(run: VolumeOutcome) -> dict[str, Any]:
    """The committed profile as kept in the decision log (with the steps' decision)."""
    r = run.request
    return {
        "kind": VOLUME_KIND,
        "id": r.id,
        "transaction": run.transaction,
        "src": [r.src_domain, r.src_point],
        "dst": [r.dst_domain, r.dst_point],
        "volume_bytes": r.volume_bytes,
        "not_before": r.not_before,
        "deadline": r.deadline,
        "policing": r.policing.value,
        "completion": run.completion,
        "steps": [
            {"start": s.start, "end": s.end, "path_rates": list(s.path_rates)} for s in run.steps
        ],
        "paths": [[leg.domain for leg in legs] for legs in run.legs],
        "step_transactions": [tx.id for tx in run.transactions],
        # Logged with the decision, so that recovery's Commits carry the same rules.
        "step_switches": step_plans_body(run.plans),
    }


def cancel_stored(context: RunContext, reservation: str) -> dict[str, Any] | None:
    """Release every step of a stored volume reservation (idempotent); its view after."""
    body = lookup_volume(context, reservation)
    if body is None or body["status"] != "committed":
        return body
    for tx_id in body["step_transactions"]:
        tx = context.decisions.transaction(tx_id)
        if tx is not None and tx.decision is Decision.COMMIT:
            context.delivery.release(tx, "cancelled", lambda event: None)
    return lookup_volume(context, reservation)


def lookup_volume(context: RunContext, reservation: str) -> dict[str, Any] | None:
    """A volume reservation as stored, with its present status ("failed", "committed",
    or "cancelled" once every step is released); None if unknown or not a volume."""
    body = context.decisions.result(reservation)
    if body is None or not is_volume_body(body):
        return None
    if body.get("status") == "failed":
        return body
    released = [
        context.decisions.transaction(f"{tx}/{RELEASE_LABEL}") for tx in body["step_transactions"]
    ]
    status = "cancelled" if all(t is not None for t in released) else "committed"
    return {**body, "status": status}


# -- offers ---------------------------------------------------------------------


def _spans_by_domain(legs: Sequence[tuple[Leg, ...]]) -> Spans:
    spans: Spans = {}
    for i, path_legs in enumerate(legs):
        for leg in path_legs:
            spans.setdefault(leg.domain, []).append((i, leg.entry, leg.exit))
    return spans


def _offers_over_time(
    context: RunContext, run: VolumeOutcome, spans: Spans, horizon: int
) -> dict[str, list[OfferStep]]:
    """Each visible domain's offers over [not_before, horizon) as core `OfferStep`s."""
    r = run.request
    visible = [d for d in spans if context.caches.view.domains[d].visible]
    with context.agents.together():
        calls: dict[str, Pending[list[int]]] = {
            d: context.agents.offers(
                d,
                OffersCall(
                    run.transaction,
                    run.token,
                    (r.not_before, horizon),
                    tuple((a, b) for _, a, b in spans[d]),
                    r.symmetric,
                    over_time=True,
                ),
            )
            for d in visible
        }
    timelines: dict[str, list[OfferStep]] = {}
    for domain, call in calls.items():
        try:
            answers: Sequence[SpanOffer] = call.result()  # type: ignore[assignment]
        except CallFailedError as exc:  # offers nothing: its paths carry nothing
            run.trace.append(TraceEvent("offers", domain, f"no offer: {exc.message}"))
            answers = [SpanOffer(0, ((r.not_before, horizon, 0),))] * len(spans[domain])
        timelines[domain] = _domain_steps(domain, spans[domain], answers)
        text = ", ".join(f"[{s.start}, {s.end}) {s.offer.bandwidth}" for s in timelines[domain])
        run.trace.append(TraceEvent("offers", domain, f"over time: {text}"))
    return timelines


def _domain_steps(
    domain: str, spans: Sequence[tuple[int, str, str]], answers: Sequence[SpanOffer]
) -> list[OfferStep]:
    """One domain's spans' step functions as one: per interval, an `Offer` whose total is
    the sum over its distinct spans and whose per-path caps are each path's span."""
    cuts = sorted({t for answer in answers for a, b, _ in answer.steps for t in (a, b)})
    out: list[OfferStep] = []
    for left, right in itertools.pairwise(cuts):
        at = [_value_at(answer, left) for answer in answers]
        per_path = {i: v for (i, _, _), v in zip(spans, at, strict=True)}
        distinct = {(a, b): v for (_, a, b), v in zip(spans, at, strict=True)}
        out.append(OfferStep(left, right, Offer(domain, sum(distinct.values()), per_path)))
    return out


def _value_at(answer: SpanOffer, instant: int) -> int:
    return next((bw for a, b, bw in answer.steps if a <= instant < b), 0)


# -- the steps' two-phase commit -------------------------------------------------


def _commit_steps(context: RunContext, run: VolumeOutcome) -> VolumeOutcome:
    wanted = [_segments(run.legs, step) for step in run.steps]
    txs = [
        Transaction(step_transaction(run.transaction, i), run.request.id, tuple(w), run.token)
        for i, w in enumerate(wanted)
    ]
    for tx in txs:  # logged (undecided) before any Prep, so a restart aborts them
        context.mark_live(tx.id)
        context.decisions.save(tx, durable=False)
    if context.hooks.before_prep is not None:
        context.hooks.before_prep(txs[0])
    hold = context.config.hold_seconds
    with context.agents.together():
        calls = [
            {
                d: context.agents.prepare(
                    d,
                    PrepCall(tx.id, run.token, (s.start, s.end), seg, hold, run.request.symmetric),
                )
                for d, seg in w.items()
            }
            for tx, s, w in zip(txs, run.steps, wanted, strict=True)
        ]
    vlans: list[list[tuple[str, int, int]]] = [[] for _ in txs]
    for index, (tx, step_calls) in enumerate(zip(txs, calls, strict=True)):
        for domain, call in step_calls.items():
            vote, picked = _vote(call)
            tx.record_vote(domain, vote)
            vlans[index] += picked
    decided = [tx.decide() for tx in txs]
    if any(d is Decision.ABORT for d in decided):
        reason = next(tx.reason for tx in txs if tx.decision is Decision.ABORT)
        for tx in txs:  # one no anywhere aborts every step
            tx.decision, tx.reason = Decision.ABORT, f"step {tx.id}: {reason}"
    run.transactions = tuple(txs)
    committed = txs[0].decision is Decision.COMMIT
    if committed:
        # Each step's Commit carries its SDX/edge rules, so every agent provisions the
        # step like any hold, for the step's own window.
        run.plans = tuple(_rule_plan(context, tx.id, run, i, vlans[i]) for i, tx in enumerate(txs))
    body = volume_body(run) if committed else None
    # Every step's decision (and the profile) in one durable write, before anyone
    # hears any of them: a crash leaves all steps decided alike, or none decided.
    context.decisions.save(txs[0], result=body, also=txs[1:])
    if context.hooks.after_decide is not None:
        context.hooks.after_decide(txs[0])
    for index, tx in enumerate(txs):
        plan = run.plans[index] if committed else ()
        context.delivery.deliver(tx, run.trace.append, switches=plan)
        context.forget_live(tx.id)
    if not committed:
        run.steps = ()
        return _fail(run, txs[0].reason)
    run.success = True
    return run


def _segments(legs: Sequence[tuple[Leg, ...]], step: RateStep) -> dict[str, tuple[SegmentAsk, ...]]:
    out: dict[str, list[SegmentAsk]] = {}
    for i, rate in enumerate(step.path_rates):
        if rate > 0:
            for leg in legs[i]:
                out.setdefault(leg.domain, []).append(SegmentAsk(leg.entry, leg.exit, rate, i))
    return {d: tuple(s) for d, s in out.items()}


def _vote(call: Pending[PrepReply]) -> tuple[Vote, tuple[tuple[str, int, int], ...]]:
    """The vote, and the VLANs a yes picked (link, VLAN, path index)."""
    try:
        reply = call.result()
    except CallFailedError as exc:
        return Vote(False, f"{exc.status}: {exc.message}"), ()
    return Vote(reply.yes, reply.reason), tuple(reply.vlans) if reply.yes else ()


def _rule_plan(
    context: RunContext,
    step_id: str,
    run: VolumeOutcome,
    index: int,
    vlans: Sequence[tuple[str, int, int]],
) -> tuple[SwitchPlan, ...]:
    """One step's SDX/edge rules, named after its sub-transaction."""
    step = run.steps[index]
    paths = [
        CommittedPath(
            tuple(leg.domain for leg in run.legs[i]),
            rate,
            {link: vlan for link, vlan, path in vlans if path == i},
        )
        for i, rate in enumerate(step.path_rates)
        if rate > 0
    ]
    try:
        return context.caches.rule_plan(step_id, paths, run.request.policing)
    except InputError as exc:
        run.trace.append(TraceEvent("rules", "", f"step {index}: no rule plan: {exc}"))
        return ()


def _refusal_reason(refusal: VolumeRefusal, run: VolumeOutcome) -> str:
    if refusal.most_by_deadline == 0 and "blind" in refusal.reason:
        return refusal.reason
    when = (
        ""
        if run.earliest_completion is None
        else f"; all of it by {run.earliest_completion} at the earliest"
    )
    return (
        f"the offers carry only {run.most_by_deadline} of {run.request.volume_bytes} bytes "
        f"by the deadline{when}"
    )


def _fail(run: VolumeOutcome, reason: str) -> VolumeOutcome:
    run.success, run.reason = False, reason
    run.trace.append(TraceEvent("result", "", f"failed: {reason}"))
    return run


def _check(context: RunContext, r: VolumeRequest) -> None:
    """Every front end's volume checks (REST, gRPC and CLI reach them all here); errors
    name the field (the end points as the Orchestrator service spells them)."""
    if not r.id or len(r.id) > 64:
        raise InputError("id", "must be 1-64 characters")
    check_ends(context.caches.view, (r.src_domain, r.src_point), (r.dst_domain, r.dst_point))
    if r.src_domain == r.dst_domain:
        raise InputError("destination.domain", "must be another site than source.domain")
    if r.volume_bytes <= 0:
        raise InputError("volume", "must be positive")
    if r.not_before < int(context.clock()) - GRACE_SECONDS:
        raise InputError("not_before", "is in the past")
    if r.deadline <= r.not_before:
        raise InputError("deadline", f"must be after not_before ({format_instant(r.not_before)})")
    if r.max_rate is not None and r.max_rate <= 0:
        raise InputError("max_rate", "must be positive")
    if r.max_paths < 0 or r.max_paths > 8:
        raise InputError("max_paths", "must be between 1 and 8 (0: the default)")
