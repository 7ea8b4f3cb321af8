"""The orchestrator: one multi-domain reservation, from domain paths to commit.

Phase 1 asks the visible domains on the candidate domain paths for offers
(ReqOffers/SendOffers) and composes a split with the chosen strategy (equal
splitting, partial offers, full offers; blind domains are asked concretely
with a ReservationPrep). Phase 2 prepares every participant, decides, writes
the decision durably, and only then sends Commit or Abort. A domain asked
during composition but left out of the final split is aborted.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from braid.app.negotiation.delivery import Delivery
from braid.app.negotiation.ports import AgentPool, CallFailedError, DecisionLog, Pending, PrepReply
from braid.app.negotiation.results import (
    DEFAULT_STRATEGY,
    NegotiationRequest,
    NegotiationResult,
    PathOutcome,
    TraceEvent,
)
from braid.core.errors import InputError
from braid.core.model.units import format_bandwidth
from braid.core.negotiation.domain_paths import domain_paths
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.holds import SegmentAsk
from braid.core.negotiation.result_rules import (
    CommittedPath,
    SwitchPlan,
    committed_rule_plan,
    summarise,
)
from braid.core.negotiation.routes import Leg, domain_pairs, route_legs
from braid.core.negotiation.strategies import Ask, Offer, Refusal, Strategy, compose
from braid.core.negotiation.transaction import Decision, Transaction, Vote

_ROUTES_KEPT = 4096


@dataclass(frozen=True, slots=True)
class OrchestratorConfig:
    strategy: Strategy = DEFAULT_STRATEGY
    max_paths: int = 2
    hold_seconds: int = 60


class Orchestrator:
    """Negotiates reservations with the domain agents; safe to call from many threads."""

    def __init__(
        self,
        view: GlobalView,
        agents: AgentPool,
        decisions: DecisionLog,
        config: OrchestratorConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.view = view
        self.agents = agents
        self.decisions = decisions
        self.config = config or OrchestratorConfig()
        self.clock = clock
        self.delivery = Delivery(agents, decisions)
        # Called once a decision is durable and before anyone hears it (fault tests).
        self.after_decide: Callable[[Transaction], None] | None = None
        self.kinds = {d: spec.kind for d, spec in view.domains.items()}
        self.pairs = domain_pairs(view)
        self._busy: set[str] = set()
        self._routes: dict[
            tuple[str, str, str, str, int],
            tuple[list[tuple[str, ...]], tuple[tuple[Leg, ...], ...]],
        ] = {}
        self._lock = threading.Lock()

    def reserve(self, request: NegotiationRequest) -> NegotiationResult:
        """Negotiate `request`; a repeated id returns the first outcome (idempotent)."""
        self._check(request)
        with self._lock:
            if request.id in self._busy:
                raise InputError("id", f"reservation {request.id!r} is being negotiated")
            self._busy.add(request.id)
        try:
            known = self.decisions.result(request.id)
            if known is not None:
                return NegotiationResult.from_dict(known)
            run = _Run(self, request)
            result = run.execute()
            if run.decided is None:
                self.decisions.save_result(request.id, result.to_dict())
            else:  # the acknowledgements and the result in one write (the decision is synced)
                self.decisions.save(run.decided, result=result.to_dict(), durable=False)
            return result
        finally:
            with self._lock:
                self._busy.discard(request.id)

    def routes(
        self, src: str, src_point: str, dst: str, dst_point: str, k: int
    ) -> tuple[list[tuple[str, ...]], tuple[tuple[Leg, ...], ...]]:
        """The candidate domain paths and their legs; the view never changes, so they
        are kept (a bounded number of end-point pairs) instead of found again."""
        key = (src, src_point, dst, dst_point, k)
        known = self._routes.get(key)
        if known is None:
            paths = domain_paths(self.kinds, self.pairs, src, dst, k)
            legs = tuple(route_legs(self.view, p, src_point, dst_point) for p in paths)
            known = (list(paths), legs)
            if len(self._routes) >= _ROUTES_KEPT:
                self._routes.clear()
            self._routes[key] = known
        return list(known[0]), known[1]

    def in_progress(self) -> int:
        """Negotiations under way right now."""
        return len(self._busy)

    def lookup(self, reservation: str) -> NegotiationResult | None:
        known = self.decisions.result(reservation)
        return None if known is None else NegotiationResult.from_dict(known)

    def _check(self, r: NegotiationRequest) -> None:
        if not r.id or len(r.id) > 64:
            raise InputError("id", "must be 1-64 characters")
        for field_name, domain in (
            ("source.domain", r.src_domain),
            ("destination.domain", r.dst_domain),
        ):
            spec = self.view.require_domain(domain, field_name)
            if spec.kind != "site":
                raise InputError(field_name, f"domain {domain!r} is a {spec.kind}, not a site")
        for field_name, point in (
            ("source.point", r.src_point),
            ("destination.point", r.dst_point),
        ):
            if not point:
                raise InputError(field_name, "missing")
        if r.bandwidth <= 0:
            raise InputError("bandwidth", "must be positive")
        if r.end <= r.start:
            raise InputError("window.end", f"must be after start ({r.start})")
        if r.start < int(self.clock()) - 5:
            raise InputError("window.start", "is in the past")
        if r.max_paths < 0 or r.max_paths > 8:
            raise InputError("max_paths", "must be between 1 and 8 (0: the default)")


@dataclass
class _Run:
    """One negotiation's working state."""

    orchestrator: Orchestrator
    request: NegotiationRequest
    trace: list[TraceEvent] = field(default_factory=list)
    tx_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    legs: list[tuple[Leg, ...]] = field(default_factory=list)
    # Every domain sent a Prep, with what it was asked and how it answered.
    asked: dict[str, tuple[SegmentAsk, ...]] = field(default_factory=dict)
    replies: dict[str, PrepReply | CallFailedError] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    decided: Transaction | None = None  # the reservation's own transaction, once decided

    @property
    def strategy(self) -> Strategy:
        return self.request.strategy or self.orchestrator.config.strategy

    @property
    def window(self) -> tuple[int, int]:
        return (self.request.start, self.request.end)

    def note(self, phase: str, domain: str, text: str) -> None:
        self.trace.append(TraceEvent(phase, domain, text))

    def execute(self) -> NegotiationResult:
        r, o = self.request, self.orchestrator
        k = r.max_paths or o.config.max_paths
        paths, legs = o.routes(r.src_domain, r.src_point, r.dst_domain, r.dst_point, k)
        if not paths:
            return self.fail(f"no domain path joins {r.src_domain} and {r.dst_domain}")
        self.legs = list(legs)
        for i, path in enumerate(paths):
            self.note("path", "", f"candidate {i}: {' > '.join(path)}")
        offers = {} if self.strategy == "equal-split" else self.request_offers(paths)
        outcome = compose(self.strategy, r.bandwidth, paths, offers, self.probe)
        if isinstance(outcome, Refusal):
            self.abort_asked(set(self.asked), f"composition failed: {outcome.reason}")
            return self.fail(outcome.reason + self.problems_note())
        amounts = outcome.path_amounts
        shares = ", ".join(f"path {i}: {format_bandwidth(a)}" for i, a in enumerate(amounts) if a)
        self.note("compose", "", f"{self.strategy}: {shares}")
        wanted = self.segments_by_domain(paths, amounts)
        unused = {d for d in self.asked if d not in wanted or self.asked[d] != wanted[d]}
        self.abort_asked(unused, "not part of the composed split")
        self.prepare_all({d: s for d, s in wanted.items() if d not in self.asked})
        return self.decide(tuple(wanted), amounts)

    # -- phase 1 -----------------------------------------------------------------

    def request_offers(self, paths: Sequence[tuple[str, ...]]) -> dict[str, Offer]:
        o = self.orchestrator
        spans = self.spans_by_domain(paths)
        visible = [d for d in spans if o.view.domains[d].visible]
        calls: Mapping[str, Pending[list[int]]] = {
            d: o.agents.offers(
                d,
                self.tx_id,
                self.token,
                self.window,
                [(a, b) for _, a, b in spans[d]],
                self.request.symmetric,
            )
            for d in visible
        }
        offers: dict[str, Offer] = {}
        for domain, call in calls.items():
            try:
                values = call.result()
            except CallFailedError as exc:
                self.note("offers", domain, f"no offer: {exc.status} {exc.message}")
                self.problem(domain, exc)
                values = [0] * len(spans[domain])
            per_path = {i: v for (i, _, _), v in zip(spans[domain], values, strict=True)}
            distinct = {(a, b): v for (_, a, b), v in zip(spans[domain], values, strict=True)}
            offers[domain] = Offer(domain, sum(distinct.values()), per_path)
            text = ", ".join(f"{a}>{b} {format_bandwidth(v)}" for (a, b), v in distinct.items())
            self.note("offers", domain, f"SendOffers: {text}")
        for domain in spans:
            if domain not in offers:
                self.note("offers", domain, "blind: asked only with a concrete ReservationPrep")
        return offers

    def spans_by_domain(
        self, paths: Sequence[tuple[str, ...]]
    ) -> dict[str, list[tuple[int, str, str]]]:
        spans: dict[str, list[tuple[int, str, str]]] = {}
        for i, legs in enumerate(self.legs[: len(paths)]):
            for leg in legs:
                spans.setdefault(leg.domain, []).append((i, leg.entry, leg.exit))
        return spans

    def probe(self, ask: Ask) -> bool:
        """A blind domain's (or, for equal splitting, any domain's) yes or no: a real Prep."""
        segments = tuple(
            SegmentAsk(leg.entry, leg.exit, amount, i)
            for i, amount in ask.per_path
            for leg in self.legs[i]
            if leg.domain == ask.domain
        )
        self.prepare_all({ask.domain: segments})
        reply = self.replies[ask.domain]
        return isinstance(reply, PrepReply) and reply.yes

    # -- phase 2 -----------------------------------------------------------------

    def segments_by_domain(
        self, paths: Sequence[tuple[str, ...]], amounts: Sequence[int]
    ) -> dict[str, tuple[SegmentAsk, ...]]:
        out: dict[str, list[SegmentAsk]] = {}
        for i, amount in enumerate(amounts):
            if amount > 0:
                for leg in self.legs[i]:
                    out.setdefault(leg.domain, []).append(
                        SegmentAsk(leg.entry, leg.exit, amount, i)
                    )
        return {d: tuple(s) for d, s in out.items()}

    def prepare_all(self, wanted: Mapping[str, tuple[SegmentAsk, ...]]) -> None:
        o = self.orchestrator
        calls = {
            d: o.agents.prepare(
                d,
                self.tx_id,
                self.token,
                self.window,
                segments,
                o.config.hold_seconds,
                self.request.symmetric,
            )
            for d, segments in wanted.items()
        }
        for domain, call in calls.items():
            self.asked[domain] = wanted[domain]
            try:
                reply: PrepReply | CallFailedError = call.result()
            except CallFailedError as exc:
                reply = exc
                self.problem(domain, exc)
            self.replies[domain] = reply
            total = format_bandwidth(sum(s.bandwidth for s in wanted[domain]))
            if isinstance(reply, CallFailedError):
                self.note("prep", domain, f"{total}: no vote ({reply.status}: {reply.message})")
            else:
                self.note(
                    "prep",
                    domain,
                    f"{total}: {'yes' if reply.yes else 'no'}"
                    + (f" ({reply.reason})" if reply.reason else ""),
                )

    def abort_asked(self, domains: set[str], reason: str) -> None:
        """Abort Preps outside any transaction (composition failed or did not use them)."""
        held = sorted(d for d in domains if not _said_no(self.replies.get(d)))
        if not held:
            return
        tx = Transaction(self.tx_id, self.request.id, tuple(held), self.token, label="unused")
        tx.abort(reason)
        self.orchestrator.decisions.save(tx)
        self.note("abort", "", f"{', '.join(held)}: {reason}")
        self.orchestrator.delivery.deliver(tx, self.trace.append)
        for domain in held:
            self.asked.pop(domain, None)
            self.replies.pop(domain, None)

    def decide(self, participants: tuple[str, ...], amounts: Sequence[int]) -> NegotiationResult:
        o = self.orchestrator
        tx = Transaction(self.tx_id, self.request.id, participants, self.token)
        for domain in participants:
            reply = self.replies.get(domain)
            if isinstance(reply, PrepReply):
                tx.record_vote(domain, Vote(reply.yes, reply.reason))
            elif reply is not None:
                tx.record_vote(domain, Vote(False, f"{reply.status}: {reply.message}"))
        decision = tx.decide()
        o.decisions.save(tx)  # durable before anyone hears it
        if o.after_decide is not None:
            o.after_decide(tx)
        self.note("decide", "", f"{decision.value.upper()} (written to the decision log)")
        self.decided = tx
        o.delivery.deliver(tx, self.trace.append, record=False)
        if decision is Decision.ABORT:
            return self.fail(tx.reason)
        paths = tuple(
            PathOutcome(self.legs[i], amount, self.vlans_of(i))
            for i, amount in enumerate(amounts)
            if amount > 0
        )
        switches = self.rule_plan(paths)
        return NegotiationResult(
            self.request.id, True, "", self.tx_id, self.strategy, paths, tuple(self.trace), switches
        )

    def rule_plan(self, paths: Sequence[PathOutcome]) -> tuple[SwitchPlan, ...]:
        """The SDX/edge rules of the committed split (seed 000 Fig. 5), for the result."""
        view = self.orchestrator.view
        committed = [CommittedPath(p.domains(), p.bandwidth, dict(p.vlans)) for p in paths]
        try:
            plan = committed_rule_plan(view, self.request.id, committed)
        except InputError as exc:
            self.note("rules", "", f"no rule plan: {exc}")
            return ()
        switches = summarise(plan, view)
        self.note("rules", "", f"rule plan for {len(switches)} switches (edge-mode pools)")
        return switches

    def problem(self, domain: str, exc: CallFailedError) -> None:
        text = f"{domain} not reached" if exc.unreachable else f"{domain} refused: {exc.message}"
        if text not in self.problems:
            self.problems.append(text)

    def problems_note(self) -> str:
        return f" ({'; '.join(self.problems)})" if self.problems else ""

    def vlans_of(self, path_index: int) -> tuple[tuple[str, int], ...]:
        out: list[tuple[str, int]] = []
        for reply in self.replies.values():
            if isinstance(reply, PrepReply):
                out.extend((link, vlan) for link, vlan, i in reply.vlans if i == path_index)
        return tuple(sorted(out))

    def fail(self, reason: str) -> NegotiationResult:
        self.note("result", "", f"failed: {reason}")
        return NegotiationResult(
            self.request.id, False, reason, self.tx_id, self.strategy, (), tuple(self.trace)
        )


def _said_no(reply: PrepReply | CallFailedError | None) -> bool:
    """A definite no holds nothing; a yes, a timeout or an error may hold something."""
    return isinstance(reply, PrepReply) and not reply.yes
