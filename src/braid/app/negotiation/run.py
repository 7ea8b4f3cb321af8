"""One negotiation's working state and steps, from domain paths to the decision.

`Orchestrator.reserve` makes one `NegotiationRun` per request (see the
negotiator module for the protocol and what is logged when); the run sees
the orchestrator only as a `RunContext` (context).
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from braid.app.agent.messages import OffersCall, PrepCall
from braid.app.negotiation.caches import RouteKey, RouteOffers
from braid.app.negotiation.context import RunContext
from braid.app.negotiation.ports import CallFailedError, Pending, PrepReply, Replaced
from braid.app.negotiation.results import (
    NegotiationRequest,
    NegotiationResult,
    PathOutcome,
    TraceEvent,
)
from braid.core.errors import InputError
from braid.core.model.units import format_bandwidth
from braid.core.negotiation.holds import NO_FREE_VLAN, SegmentAsk
from braid.core.negotiation.result_rules import CommittedPath, SwitchPlan
from braid.core.negotiation.routes import Leg
from braid.core.negotiation.strategies import (
    Ask,
    Offer,
    Refusal,
    Strategy,
    compose,
    fits_offers,
)
from braid.core.negotiation.transaction import Decision, Transaction, Vote, succession


@dataclass
class NegotiationRun:
    """One negotiation's working state."""

    context: RunContext
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
    begun: Transaction | None = None  # the same, as logged before the first Prep
    prior: str = ""  # why a try with more paths failed (a link out of VLANs), if one did
    # What was asked before any retry with fewer paths (kept with the result).
    base: NegotiationRequest | None = None
    # A modify: the committed version this one replaces, released iff this commits.
    replaces: Transaction | None = None
    speculated: bool = False  # Preps of a guessed split went out with the offers
    offered: RouteOffers | None = None  # the candidate paths and what they were offered

    @property
    def strategy(self) -> Strategy:
        return self.request.strategy or self.context.config.strategy

    @property
    def window(self) -> tuple[int, int]:
        return (self.request.start, self.request.end)

    @property
    def replaced(self) -> Replaced | None:
        """A modify's old version, which each domain counts as free for the new one."""
        old = self.replaces
        return None if old is None else (old.id, old.token)

    def offers_call(self, spans: Sequence[tuple[str, str]]) -> OffersCall:
        """A ReqOffers of this transaction for `spans`."""
        symmetric = self.request.symmetric
        return OffersCall(
            self.tx_id, self.token, self.window, tuple(spans), symmetric, self.replaced
        )

    def prep_call(self, segments: Sequence[SegmentAsk], hold_seconds: int) -> PrepCall:
        """A ReservationPrep of this transaction for `segments`."""
        return PrepCall(
            self.tx_id,
            self.token,
            self.window,
            tuple(segments),
            hold_seconds,
            self.request.symmetric,
            replaces=self.replaced,
        )

    def note(self, phase: str, domain: str, text: str) -> None:
        self.trace.append(TraceEvent(phase, domain, text))

    def execute(self) -> NegotiationResult:
        r, o = self.request, self.context
        paths, legs = o.caches.routes(self.route)
        if not paths:
            return self.fail(f"no domain path joins {r.src_domain} and {r.dst_domain}")
        self.legs = list(legs)
        for i, path in enumerate(paths):
            self.note("path", "", f"candidate {i}: {' > '.join(path)}")
        with o.agents.negotiating({d for path in paths for d in path}):
            return self.negotiate(paths)

    def negotiate(self, paths: Sequence[tuple[str, ...]]) -> NegotiationResult:
        """Both phases over the candidate `paths` (their legs known)."""
        r, o = self.request, self.context
        offers = self.first_round(paths, self.guess(paths))
        outcome = compose(self.strategy, r.bandwidth, paths, offers, self.probe)
        if isinstance(outcome, Refusal):
            o.caches.learn_offers(self.route, None)
            self.abort_asked(set(self.asked), f"composition failed: {outcome.reason}")
            return self.fail(outcome.reason + self.problems_note())
        self.offered = (tuple(paths), offers)
        amounts = outcome.path_amounts
        shares = ", ".join(f"path {i}: {format_bandwidth(a)}" for i, a in enumerate(amounts) if a)
        self.note("compose", "", f"{self.strategy}: {shares}")
        wanted = self.segments_by_domain(paths, amounts)
        if any(d in wanted and wanted[d] != asked for d, asked in self.asked.items()):
            self.start_over("the offers composed another split than the one prepared with them")
        unused = {d for d in self.asked if d not in wanted}
        self.abort_asked(unused, "not part of the composed split")
        self.prepare_all({d: s for d, s in wanted.items() if d not in self.asked})
        return self.decide(tuple(wanted), amounts)

    @property
    def route(self) -> RouteKey:
        r = self.request
        k = r.max_paths or self.context.config.max_paths
        return (r.src_domain, r.src_point, r.dst_domain, r.dst_point, k)

    # -- phase 1 -----------------------------------------------------------------

    def guess(self, paths: Sequence[tuple[str, ...]]) -> dict[str, tuple[SegmentAsk, ...]]:
        """The split to prepare together with the offers: what the strategy composes if
        every visible domain can carry the whole request and every blind one says yes.

        Guessed only on a route whose last negotiation committed, and only when the
        guess fits what that one was offered. When the fresh offers then compose the
        same split (a request well within what the paths carry), the Preps are
        already answered and phase 2 needs only the decision: two rounds instead of
        three. Otherwise (`start_over`) those Preps are aborted and the split is
        prepared again, and the route is not guessed until a negotiation there
        commits again. Empty when not guessing.
        """
        o = self.context
        known = o.caches.last_offers(self.route) if o.config.speculate else None
        if known is None or known[0] != tuple(paths):
            return {}
        amounts = o.caches.guessed(self.strategy, self.request.bandwidth, known[0])
        # Within what the route was last offered, or the offers will likely refuse it.
        if amounts is None or not fits_offers(paths, amounts, known[1]):
            return {}
        return self.segments_by_domain(paths, amounts)

    def first_round(
        self, paths: Sequence[tuple[str, ...]], guess: Mapping[str, tuple[SegmentAsk, ...]]
    ) -> dict[str, Offer]:
        """Ask the visible domains for offers (none for equal splitting), and Prep the
        `guess` in the same message to each domain; returns the offers."""
        o = self.context
        spans = self.spans_by_domain(paths)
        asking = self.strategy != "equal-split"
        visible = [d for d in spans if asking and o.caches.view.domains[d].visible]
        if guess and self.begun is None:
            self.begin()
        with o.agents.together():  # each domain's offers, then its Prep, in one batch
            calls: Mapping[str, Pending[list[int]]] = {
                d: o.agents.offers(d, self.offers_call([(a, b) for _, a, b in spans[d]]))
                for d in visible
            }
            preps = self.send_preps(guess)
        offers = self.collect_offers(spans, calls) if asking else {}
        when = "with the offers" if asking else "of every domain at once"
        self.collect_preps(guess, preps, f" (asked {when})")
        self.speculated = bool(guess)
        return offers

    def collect_offers(
        self,
        spans: Mapping[str, list[tuple[int, str, str]]],
        calls: Mapping[str, Pending[list[int]]],
    ) -> dict[str, Offer]:
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
        """A blind domain's (or, for equal splitting, any domain's) yes or no: a real Prep,
        or the answer to the one prepared with the offers when it asked the same."""
        segments = tuple(
            SegmentAsk(leg.entry, leg.exit, amount, i)
            for i, amount in ask.per_path
            for leg in self.legs[i]
            if leg.domain == ask.domain
        )
        known = self.asked.get(ask.domain)
        if known is not None and known != segments:
            self.start_over(f"{ask.domain} was prepared for another share than it is asked")
        if known != segments:
            self.prepare_all({ask.domain: segments})
        reply = self.replies[ask.domain]
        return isinstance(reply, PrepReply) and reply.yes

    def start_over(self, reason: str) -> None:
        """The guessed split was wrong: abort its Preps and go on as a new transaction
        (an agent refuses a second Prep for a transaction it aborted)."""
        o = self.context
        self.note("guess", "", f"{reason}: aborted, prepared again as a new transaction")
        o.caches.learn_offers(self.route, None)
        self.abort_asked(set(self.asked), reason)
        if self.begun is not None:  # nobody holds it any more: nothing left to deliver
            self.begun.abort(reason)
            self.begun.supersede()
            o.decisions.save(self.begun, durable=False)
        o.forget_live(self.tx_id)
        self.tx_id, self.begun = uuid.uuid4().hex, None
        self.asked.clear()
        self.replies.clear()
        self.speculated = False

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

    def begin(self) -> None:
        """Log the transaction, undecided, with every domain that may get a Prep.

        Not synced: it survives a crash of the process (the write-ahead log is in
        the OS's hands); were it lost with the machine, a participant asking about
        an unknown transaction is told abort (presumed abort) all the same.
        """
        o = self.context
        every = tuple(dict.fromkeys(leg.domain for legs in self.legs for leg in legs))
        self.begun = Transaction(self.tx_id, self.request.id, every, self.token)
        o.mark_live(self.tx_id)
        o.decisions.save(self.begun, durable=False)
        if o.hooks.before_prep is not None:
            o.hooks.before_prep(self.begun)

    def prepare_all(self, wanted: Mapping[str, tuple[SegmentAsk, ...]]) -> None:
        if not wanted:
            return
        if self.begun is None:
            self.begin()
        with self.context.agents.together():
            calls = self.send_preps(wanted)
        self.collect_preps(wanted, calls)

    def send_preps(
        self, wanted: Mapping[str, tuple[SegmentAsk, ...]]
    ) -> dict[str, Pending[PrepReply]]:
        o = self.context
        hold = o.config.hold_seconds
        return {d: o.agents.prepare(d, self.prep_call(s, hold)) for d, s in wanted.items()}

    def collect_preps(
        self,
        wanted: Mapping[str, tuple[SegmentAsk, ...]],
        calls: Mapping[str, Pending[PrepReply]],
        how: str = "",
    ) -> None:
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
                    + (f" ({reply.reason})" if reply.reason else "")
                    + how,
                )

    def abort_asked(self, domains: set[str], reason: str) -> None:
        """Abort Preps outside any transaction (composition failed or did not use them)."""
        held = sorted(d for d in domains if not _said_no(self.replies.get(d)))
        if not held:
            return
        tx = Transaction(self.tx_id, self.request.id, tuple(held), self.token, label="unused")
        tx.abort(reason)
        self.context.decisions.save(tx)
        self.note("abort", "", f"{', '.join(held)}: {reason}")
        self.context.delivery.deliver(tx, self.trace.append)
        for domain in held:
            self.asked.pop(domain, None)
            self.replies.pop(domain, None)

    def decide(self, participants: tuple[str, ...], amounts: Sequence[int]) -> NegotiationResult:
        o = self.context
        tx = Transaction(self.tx_id, self.request.id, participants, self.token)
        for domain in participants:
            reply = self.replies.get(domain)
            if isinstance(reply, PrepReply):
                tx.record_vote(domain, Vote(reply.yes, reply.reason))
            elif reply is not None:
                tx.record_vote(domain, Vote(False, f"{reply.status}: {reply.message}"))
        decision = tx.decide()
        self.note("decide", "", f"{decision.value.upper()} (written to the decision log)")
        result = self.committed(amounts) if decision is Decision.COMMIT else None
        old = self.replaces
        also: tuple[Transaction, ...] = ()  # a modify's release of the old version, and it
        if result is not None and old is not None:
            also = (succession(tx, old, f"replaced by {tx.id} (modified)"), old)
            self.note("decide", "", f"and release the old version {old.id}")
        # Durable, with the whole result (and a modify's release of the old version),
        # before anyone hears it.
        body = None if result is None else result.to_dict()
        o.decisions.save(tx, result=body, also=also)
        if o.hooks.after_decide is not None:
            o.hooks.after_decide(tx)
        self.decided = tx
        switches = None if result is None else result.switches
        o.delivery.deliver(tx, self.trace.append, record=False, switches=switches)
        if old is not None and also:
            if o.hooks.before_release is not None:
                o.hooks.before_release(also[0])
            o.delivery.hand_over(old, also[0], self.trace.append)
        # The offers of a committed negotiation gate the next guess on its route.
        o.caches.learn_offers(self.route, None if result is None else self.offered)
        if result is None:
            return self.fail(tx.reason)
        return replace(result, trace=tuple(self.trace))

    def committed(self, amounts: Sequence[int]) -> NegotiationResult:
        paths = tuple(
            PathOutcome(self.legs[i], amount, self.vlans_of(i))
            for i, amount in enumerate(amounts)
            if amount > 0
        )
        switches = self.rule_plan(paths)
        return NegotiationResult(
            self.request.id,
            True,
            "",
            self.tx_id,
            self.strategy,
            paths,
            tuple(self.trace),
            switches,
            request=self.base or self.request,
        )

    def rule_plan(self, paths: Sequence[PathOutcome]) -> tuple[SwitchPlan, ...]:
        """The SDX/edge rules of the committed split (seed 000 Fig. 5), for the result."""
        committed = [CommittedPath(p.domains(), p.bandwidth, dict(p.vlans)) for p in paths]
        try:
            switches = self.context.caches.rule_plan(
                self.request.id, committed, self.request.policing
            )
        except InputError as exc:
            self.note("rules", "", f"no rule plan: {exc}")
            return ()
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

    def fewer_paths(self) -> int | None:
        """How many paths to try next when every no vote was a link out of VLANs (and more
        than one path was used); None when fewer paths would not help."""
        noes = [r for r in self.replies.values() if isinstance(r, PrepReply) and not r.yes]
        others = [r for r in self.replies.values() if isinstance(r, CallFailedError)]
        used = len({s.path_index for segments in self.asked.values() for s in segments})
        if not noes or others or used < 2:
            return None
        if not all(r.reason.startswith(NO_FREE_VLAN) for r in noes):
            return None
        return used - 1

    def vlan_refusal(self) -> str:
        """The domains' own words for the VLANs they lacked ("x1: no free VLAN on ...")."""
        return "; ".join(
            f"{domain}: {reply.reason}"
            for domain, reply in sorted(self.replies.items())
            if isinstance(reply, PrepReply) and reply.reason.startswith(NO_FREE_VLAN)
        )

    def fail(self, reason: str) -> NegotiationResult:
        if self.prior:
            reason = f"{reason}; with more paths: {self.prior}"
        self.note("result", "", f"failed: {reason}")
        return NegotiationResult(
            self.request.id, False, reason, self.tx_id, self.strategy, (), tuple(self.trace)
        )


def _said_no(reply: PrepReply | CallFailedError | None) -> bool:
    """A definite no holds nothing; a yes, a timeout or an error may hold something."""
    return isinstance(reply, PrepReply) and not reply.yes
