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
from braid.core.negotiation.transaction import (
    RELEASE_LABEL,
    Decision,
    Transaction,
    Vote,
    succession,
)
from braid.core.negotiation.volume_offers import (
    OfferStep,
    RateStep,
    VolumeRefusal,
    compose_volume,
)
from braid.core.rules.enforcement import Policing
from braid.core.volume.profile import BITS_PER_BYTE

__all__ = [
    "Replacing",
    "VolumeOutcome",
    "VolumeRequest",
    "cancel_stored",
    "cancel_volume",
    "check_volume_request",
    "lookup_volume",
    "negotiate_volume",
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


@dataclass(frozen=True, slots=True)
class Replacing:
    """A modify's old version: its committed steps (each counted as free by the new
    steps' offers and Preps, all released iff the new version commits) and what its
    profile carried before now (kept as it was: `moved_bytes`, over `history`'s
    (start, end, bit/s) steps)."""

    steps: tuple[Transaction, ...]
    history: tuple[tuple[int, int, int], ...] = ()
    moved_bytes: int = 0


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
    replacing: Replacing | None = None  # a modify's old version

    @property
    def completion(self) -> int | None:
        return self.steps[-1].end if self.steps else None


def step_transaction(transaction: str, index: int) -> str:
    """Step `index`'s sub-transaction (agents take only A-Z a-z 0-9 . _ : - in an id)."""
    return f"{transaction}.s{index}"


def reserve_volume(context: RunContext, request: VolumeRequest) -> VolumeOutcome:
    """Negotiate `request` with the domains (see the module's note for the protocol)."""
    check_volume_request(context, request)
    if context.decisions.result(request.id) is not None:
        raise InputError("id", f"reservation {request.id!r} already exists")
    return _remember_failure(context, negotiate_volume(context, request))


def negotiate_volume(
    context: RunContext, request: VolumeRequest, replacing: Replacing | None = None
) -> VolumeOutcome:
    """`request` (for a modify: what is left to move, beside the old version)."""
    run = VolumeOutcome(request, False, "", uuid.uuid4().hex, secrets.token_urlsafe(24))
    run.replacing = replacing
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
            run.most_by_deadline = _moved(run) + composed.most_by_deadline // BITS_PER_BYTE
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
        "volume_bytes": r.volume_bytes + _moved(run),
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
        "max_paths": r.max_paths,
        "max_rate": r.max_rate,
        "symmetric": r.symmetric,
        # A modified version: what the old one carried before the modify (kept).
        "moved_bytes": _moved(run),
        "history": [list(step) for step in run.replacing.history] if run.replacing else [],
    }


def _moved(run: VolumeOutcome) -> int:
    return run.replacing.moved_bytes if run.replacing is not None else 0


def _replaced(run: VolumeOutcome) -> tuple[tuple[str, str], ...]:
    """The old version's steps, which each domain counts as free for the new ones."""
    return tuple((tx.id, tx.token) for tx in run.replacing.steps) if run.replacing else ()


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
    first, *more = _replaced(run) or (None,)
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
                    first,
                    over_time=True,
                    also_replaces=tuple(more),
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
    first, *more = _replaced(run) or (None,)
    with context.agents.together():
        calls = [
            {
                d: context.agents.prepare(
                    d,
                    PrepCall(
                        tx.id,
                        run.token,
                        (s.start, s.end),
                        seg,
                        hold,
                        run.request.symmetric,
                        replaces=first,
                        also_replaces=tuple(more),
                    ),
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
    releases = _releases(run, txs[0]) if committed else ()
    # Every step's decision (and the profile, and a modify's release of every old
    # step) in one durable write, before anyone hears any of them: a crash leaves
    # all steps decided alike, or none decided.
    context.decisions.save(txs[0], result=body, also=(*txs[1:], *releases))
    if context.hooks.after_decide is not None:
        context.hooks.after_decide(txs[0])
    for index, tx in enumerate(txs):
        plan = run.plans[index] if committed else ()
        context.delivery.deliver(tx, run.trace.append, switches=plan)
        context.forget_live(tx.id)
    _hand_over(context, run, releases)
    if not committed:
        run.steps = ()
        return _fail(run, txs[0].reason)
    run.success = True
    return run


def _releases(run: VolumeOutcome, first: Transaction) -> tuple[Transaction, ...]:
    """A committed modify's release of each old step, and the superseded step beside it."""
    out: list[Transaction] = []
    for old in run.replacing.steps if run.replacing else ():
        out += [succession(first, old, f"replaced by {run.transaction} (modified)"), old]
    return tuple(out)


def _hand_over(context: RunContext, run: VolumeOutcome, releases: Sequence[Transaction]) -> None:
    """Once the new steps are committed, release the old ones (already decided)."""
    pairs = list(zip(releases[::2], releases[1::2], strict=True))
    if pairs and context.hooks.before_release is not None:
        context.hooks.before_release(pairs[0][0])
    for release, old in pairs:
        context.delivery.hand_over(old, release, run.trace.append)


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
        f"the offers carry only {run.most_by_deadline} of "
        f"{run.request.volume_bytes + _moved(run)} bytes "
        f"by the deadline{when}"
    )


def _fail(run: VolumeOutcome, reason: str) -> VolumeOutcome:
    run.success, run.reason = False, reason
    run.trace.append(TraceEvent("result", "", f"failed: {reason}"))
    return run


def check_volume_request(context: RunContext, r: VolumeRequest) -> None:
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
