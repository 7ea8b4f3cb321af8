"""One domain's agent: offers, holds, bookings — the service behind `braid agent`.

The gRPC servicer is a thin translation of this class; every check of a
message happens here, before anything changes, and every change is written
to the agent's store before the answer leaves.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar, cast

from braid.app.agent.messages import (
    MAX_ASK_INTERVAL,
    AbortCall,
    AgentCall,
    AgentError,
    CommitCall,
    LinkPeak,
    OffersCall,
    Outcome,
    PrepCall,
    ReleaseCall,
    SpanOffer,
    Vote,
)
from braid.app.agent.peers import Caller, admit, offer_refusal, prep_refusal
from braid.app.agent.ports import DecisionSource, HoldStore
from braid.app.negotiation.defaults import MAX_HOLD_SECONDS
from braid.core.errors import InputError
from braid.core.model.network import Network
from braid.core.model.units import FOREVER
from braid.core.negotiation.domains import MultiDomainNetwork
from braid.core.negotiation.holds import (
    BadTokenError,
    Hold,
    HoldBook,
    HoldState,
    PrepRefused,
    StateConflictError,
    UnknownTransactionError,
)
from braid.core.negotiation.peers import Peer, PeerPolicy, check_vlan_links
from braid.core.negotiation.published import domain_part
from braid.core.negotiation.result_rules import SwitchPlan

_TRANSACTION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
MAX_SPANS = 16
_T = TypeVar("_T")


class AgentService:
    """The holds and bookings of one domain, guarded by one lock."""

    def __init__(
        self,
        domains: MultiDomainNetwork,
        domain: str,
        store: HoldStore,
        *,
        max_hold_seconds: int = MAX_HOLD_SECONDS,
        past_grace_seconds: int = 5,
        clock: Callable[[], float] = time.time,
        decisions: DecisionSource | None = None,
        policy: PeerPolicy | None = None,
    ) -> None:
        spec = domains.view.require_domain(domain, "--domain")
        self.domain = domain
        self.kind = spec.kind
        self.visible = spec.visible
        topology = domains.domain_topology(domain)
        vlans = {
            link.id: link.vlans for link in domains.view.links.values() if link.owner == domain
        }
        self.book = HoldBook(Network(topology), vlans)
        if policy is not None:
            check_vlan_links(policy, vlans)
        # Who may call and within which limits; None: anyone, without limits.
        self.policy = policy
        self.points = frozenset(topology.nodes)
        self.part = domain_part(domains, domain)  # what it publishes (DomainAgent.View)
        self.ceiling = sum(link.capacity for link in topology.links.values())
        self.store = store
        self.max_hold = max_hold_seconds
        self.grace = past_grace_seconds
        self.clock = clock
        self.decisions = decisions
        self._lock = threading.Lock()
        self.book.restore(store.load())
        # Each committed transaction's rules for this domain's switches, as the
        # Commit brought them; read by the agent's provisioning.
        self.rules: dict[str, Sequence[SwitchPlan]] = dict(store.load_rules())
        self.on_change: list[Callable[[], None]] = []  # called after holds change
        # Prepared holds whose coordinator is to be asked, and when: at once after
        # a restart (the decision may have come while this agent was down), else
        # once the hold time has passed. Attempts double the wait up to a limit.
        self._asks: dict[str, tuple[int, int]] = {
            h.transaction: (0, 0)
            for h in self.book.holds.values()
            if h.state is HoldState.HELD and h.coordinator
        }
        # Prepared holds with no coordinator to ask: freed once their time is up.
        self._expiries: dict[str, int] = {
            h.transaction: h.expires_at
            for h in self.book.holds.values()
            if h.state is HoldState.HELD and not h.coordinator
        }

    def now(self) -> int:
        return int(self.clock())

    # -- the protocol ----------------------------------------------------------

    def offers(self, call: OffersCall) -> list[int]:
        return cast(list[int], self.exchange([call])[0].value())

    def offers_over_time(self, call: OffersCall) -> list[SpanOffer]:
        """Each span's offer with its steps over the window (`call.over_time` is implied)."""
        timed = replace(call, over_time=True)
        return cast(list[SpanOffer], self.exchange([timed])[0].value())

    def prepare(self, call: PrepCall) -> Vote:
        return cast(Vote, self.exchange([call])[0].value())

    def commit(
        self, transaction: str, token: str, switches: Sequence[SwitchPlan] = ()
    ) -> tuple[Hold, bool]:
        call = CommitCall(transaction, token, tuple(p for p in switches if p.domain == self.domain))
        return cast(tuple[Hold, bool], self.exchange([call])[0].value())

    def abort(self, transaction: str, token: str) -> tuple[Hold, bool]:
        return cast(tuple[Hold, bool], self.exchange([AbortCall(transaction, token)])[0].value())

    def release(self, transaction: str, token: str) -> tuple[Hold, bool]:
        return cast(tuple[Hold, bool], self.exchange([ReleaseCall(transaction, token)])[0].value())

    def exchange(
        self,
        calls: Sequence[AgentCall],
        caller: Caller | None = None,
        decided: Mapping[str, str | None] | None = None,
    ) -> list[Outcome]:
        """Handle one caller's messages in order under one lock; one store write for all.

        Each message is handled as if it came alone; a rejected one is its own
        outcome. Every change is in the store before this returns. With a peer
        policy, a caller that is no known peer is rejected as a whole (AgentError).
        `decided`: what the coordinators answered for the Commits (`commit_questions`;
        asked here, before the lock, when not given).
        """
        peer = admit(self.policy, caller, self.domain)
        if decided is None:
            decided = {h.transaction: self.ask(h) for h in self.commit_questions(calls)}
        outcomes: list[Outcome] = []
        changes: dict[str, tuple[Hold, bool]] = {}
        rules: dict[str, Sequence[SwitchPlan]] = {}
        with self._lock:
            now = self.now()
            try:
                for call in calls:
                    try:
                        value, change = self._apply(now, call, peer, decided)
                    except InputError as exc:
                        outcomes.append(Outcome(None, _as_agent_error(exc)))
                        continue
                    outcomes.append(Outcome(value, None))
                    rules.update(self._new_rules(call))
                    if change is not None:
                        hold, whole = change
                        changes[hold.transaction] = (hold, whole or _whole(changes, hold))
            finally:  # what changed in memory is written, even if a later message broke
                if changes or rules:
                    self.store.write(
                        [h for h, whole in changes.values() if whole],
                        [h for h, whole in changes.values() if not whole],
                        rules,
                    )
        if changes or rules:
            self._changed()
        return outcomes

    def _new_rules(self, call: AgentCall) -> dict[str, Sequence[SwitchPlan]]:
        """The rules a Commit brings for a committed transaction that has none yet (a
        repeated Commit brings them too: the hold may have been committed by asking)."""
        if not isinstance(call, CommitCall) or call.transaction in self.rules:
            return {}
        mine = call.switches  # this domain's alone (CommitCall)
        hold = self.book.holds.get(call.transaction)
        if not mine or hold is None or hold.state is not HoldState.COMMITTED:
            return {}
        self.rules[call.transaction] = mine
        return {call.transaction: mine}

    def _changed(self) -> None:
        for hook in self.on_change:
            hook()

    def commit_questions(self, calls: Sequence[AgentCall]) -> list[Hold]:
        """The prepared holds Commits among `calls` would commit whose coordinator is to be
        asked first: a Commit needs its coordinator's durable decision."""
        if self.decisions is None:  # a composition with nobody to ask (tests in-process)
            return []
        with self._lock:
            found = [
                (self.book.holds.get(c.transaction), c.token)
                for c in calls
                if isinstance(c, CommitCall)
            ]
        return [
            h
            for h, token in found
            if h is not None and h.state is HoldState.HELD and h.coordinator and h.token == token
        ]

    def ask(self, hold: Hold) -> str | None:
        """The decision of `hold`'s coordinator (None: no answer)."""
        if self.decisions is None:
            return None
        return self.decisions.decision(hold.coordinator, hold.transaction, hold.token, self.domain)

    def _check_commit(self, now: int, call: CommitCall, decided: Mapping[str, str | None]) -> None:
        """A prepared hold is committed only on its coordinator's commit decision, and one
        with no coordinator only before its time is up."""
        hold = self.book.holds.get(call.transaction)
        if hold is None or hold.state is not HoldState.HELD or hold.token != call.token:
            return  # unknown, settled or not the caller's: the book answers that
        if not hold.coordinator:
            if hold.expires_at <= now:
                raise AgentError(
                    "CONFLICT",
                    "transaction_id",
                    f"cannot commit: the hold of transaction {call.transaction!r} "
                    f"expired at {hold.expires_at}",
                )
            return
        if self.decisions is None:
            return  # a composition with nobody to ask (tests in-process)
        answer = decided.get(call.transaction)
        if answer != "commit":
            said = (
                "was not asked: prepared in the same batch"
                if call.transaction not in decided
                else f"answered {answer}"
                if answer
                else "did not answer"
            )
            # Decided abort: this Commit cannot be honoured. Not decided yet, or not
            # heard: the hold stays prepared and the Commit may come again.
            raise AgentError(
                "CONFLICT" if answer == "abort" else "UNDECIDED",
                "transaction_id",
                f"cannot commit: coordinator {hold.coordinator} has no commit decision for "
                f"transaction {call.transaction!r} ({said})",
            )

    def _apply(
        self,
        now: int,
        call: AgentCall,
        peer: Peer | None,
        decided: Mapping[str, str | None],
    ) -> tuple[object, tuple[Hold, bool] | None]:
        """One message's answer and the hold it changed (with: whether its row is new)."""
        if isinstance(call, OffersCall):
            return self._offers(now, call, peer), None
        if isinstance(call, PrepCall):
            return self._prepare(now, call, peer)
        self._check_ids(call.transaction, call.token)
        if isinstance(call, CommitCall):
            self._check_commit(now, call, decided)
        book = self.book
        act = (
            book.commit
            if isinstance(call, CommitCall)
            else book.abort
            if isinstance(call, AbortCall)
            else book.release
        )
        hold, changed = self._guard(lambda: act(call.transaction, call.token))
        if hold.state is not HoldState.HELD:
            self._asks.pop(hold.transaction, None)
            self._expiries.pop(hold.transaction, None)
        # An Abort before any Prep leaves a new row (a tombstone); else only the state changes.
        return (hold, changed), ((hold, not hold.segments) if changed else None)

    def _offers(self, now: int, call: OffersCall, peer: Peer | None) -> list[int] | list[SpanOffer]:
        if not self.visible:
            raise AgentError("BLIND_DOMAIN", "", f"domain {self.domain} gives no offers (blind)")
        self._check_ids(call.transaction, call.token)
        start, end = self._check_window(call.window)
        self._check_spans(call.spans)
        refused = offer_refusal(peer, (start, end), now)
        if refused is not None:
            raise refused
        # A span on several paths (a site's LAN, say) is one question: answered once.
        book, replaces, also = self.book, call.replaces, call.also_replaces

        def offer(span: tuple[str, str]) -> int:
            entry, exit = span
            return self._guard(
                lambda: book.offer(entry, exit, start, end, call.symmetric, replaces, also)
            )

        values = {span: offer(span) for span in dict.fromkeys(call.spans)}
        if not call.over_time:
            return [values[span] for span in call.spans]

        def steps(span: tuple[str, str]) -> SpanOffer:
            entry, exit = span
            found = self._guard(
                lambda: book.offer_steps(entry, exit, start, end, call.symmetric, replaces, also)
            )
            return SpanOffer(values[span], tuple(found))

        timed = {span: steps(span) for span in values}
        return [timed[span] for span in call.spans]

    def _prepare(
        self, now: int, call: PrepCall, peer: Peer | None
    ) -> tuple[Vote, tuple[Hold, bool] | None]:
        self._check_ids(call.transaction, call.token)
        start, end = self._check_window(call.window)
        segments = call.segments
        self._check_spans([(s.entry, s.exit) for s in segments])
        if not segments:
            raise AgentError("MALFORMED", "segments", "a Prep needs at least one segment")
        for i, s in enumerate(segments):
            if not 0 < s.bandwidth <= self.ceiling:
                raise AgentError(
                    "BANDWIDTH_TOO_LARGE" if s.bandwidth else "MALFORMED",
                    f"segments[{i}].bandwidth_bps",
                    f"must be between 1 and {self.ceiling} bit/s here, got {s.bandwidth}",
                )
        total = sum(s.bandwidth for s in segments)
        refused = prep_refusal(peer, (start, end), total, now)
        if refused is not None:  # a no vote holds nothing
            return Vote(False, None, refused), None
        lifetime = min(call.hold_seconds or self.max_hold, self.max_hold)
        known = self.book.holds.get(call.transaction)
        try:
            hold = self._guard(
                lambda: self.book.prepare(
                    call.transaction,
                    call.token,
                    segments,
                    start,
                    end,
                    now + lifetime,
                    call.symmetric,
                    call.coordinator,
                    peer.vlans if peer is not None else None,
                    replaces=call.replaces,
                    also_replaces=call.also_replaces,
                )
            )
        except PrepRefused as exc:
            return Vote(False, None, str(exc)), None
        if hold is not known:  # asked for its decision, or freed, once its time is up
            if hold.coordinator:
                self._asks[hold.transaction] = (hold.expires_at, 0)
            else:
                self._expiries[hold.transaction] = hold.expires_at
        # A repeated Prep returns the hold it already has: nothing to write.
        return Vote(True, hold), (None if hold is known else (hold, True))

    def status(self, transaction: str = "") -> list[Hold]:
        with self._lock:
            if not transaction:
                return list(self.book.holds.values())
            hold = self.book.holds.get(transaction)
            if hold is None:
                raise AgentError(
                    "UNKNOWN_TRANSACTION", "transaction_id", f"unknown transaction {transaction!r}"
                )
            return [hold]

    def committed_rules(self) -> list[tuple[Hold, Sequence[SwitchPlan]]]:
        """Every transaction that brought rules, with its hold, in the order they came."""
        with self._lock:
            return [
                (self.book.holds[tx], plans)
                for tx, plans in self.rules.items()
                if tx in self.book.holds
            ]

    def peaks(self) -> list[LinkPeak]:
        """The highest level ever booked on each link direction, for leak and overbooking checks."""
        with self._lock:
            topology = self.book.network.topology
            return [
                LinkPeak(link, forward, topology.links[link].capacity, t.max_booked(0, FOREVER))
                for (link, forward), t in self.book.network.timelines().items()
            ]

    def resolve_overdue(self) -> list[Hold]:
        """Ask the coordinator of every prepared hold that is due for its decision, and
        apply it (a background timer calls this). A yes vote is never forgotten alone:
        a hold stays prepared until its coordinator says commit or abort. A hold with no
        coordinator to ask is freed (expired) once its time is up."""
        now = self.now()
        settled = self._expire_due(now)
        with self._lock:
            due = [self.book.holds[tx] for tx, (when, _) in self._asks.items() if when <= now]
        for hold in due:  # outside the lock: a question goes over the network
            answer = None
            if self.decisions is not None:
                answer = self.decisions.decision(
                    hold.coordinator, hold.transaction, hold.token, self.domain
                )
            done = self._settle(hold, answer, now)
            if done is not None:
                settled.append(done)
        return settled

    def _expire_due(self, now: int) -> list[Hold]:
        """Free every prepared hold without a coordinator whose time is up (whoever
        prepared it, however long it asked for: never past `max_hold`)."""
        with self._lock:
            due = [tx for tx, when in self._expiries.items() if when <= now]
            expired = []
            for tx in due:
                del self._expiries[tx]
                hold = self.book.holds.get(tx)
                if hold is not None and hold.state is HoldState.HELD:
                    expired.append(self.book.expire(tx))
            if expired:
                self.store.write([], expired)
        if expired:
            self._changed()
        return expired

    # -- inside ------------------------------------------------------------------

    def _settle(self, hold: Hold, answer: str | None, now: int) -> Hold | None:
        with self._lock:
            current = self.book.holds.get(hold.transaction)
            if current is None or current.state is not HoldState.HELD:
                self._asks.pop(hold.transaction, None)
                return None  # Commit or Abort came meanwhile
            if answer not in ("commit", "abort"):  # pending, or nobody answered
                attempts = self._asks.get(hold.transaction, (0, 0))[1] + 1
                wait = min(MAX_ASK_INTERVAL, 2**attempts)
                self._asks[hold.transaction] = (now + wait, attempts)
                return None
            act = self.book.commit if answer == "commit" else self.book.abort
            settled, _ = act(hold.transaction, hold.token)
            self.store.write([], [settled])
            self._asks.pop(hold.transaction, None)
        self._changed()
        return settled

    @staticmethod
    def _guard(action: Callable[[], _T]) -> _T:
        try:
            return action()
        except UnknownTransactionError as exc:
            raise AgentError("UNKNOWN_TRANSACTION", exc.field, exc.message) from exc
        except BadTokenError as exc:
            raise AgentError("BAD_TOKEN", exc.field, exc.message) from exc
        except StateConflictError as exc:
            raise AgentError("CONFLICT", exc.field, exc.message) from exc

    def _check_ids(self, transaction: str, token: str) -> None:
        if not _TRANSACTION_ID.match(transaction):
            raise AgentError("MALFORMED", "transaction_id", "must be 1-64 of A-Z a-z 0-9 . _ : -")
        if not _TOKEN.match(token):
            raise AgentError("BAD_TOKEN", "token", "must be 16-128 of A-Z a-z 0-9 _ -")

    def _check_window(self, window: tuple[int, int]) -> tuple[int, int]:
        start, end = window
        if end <= start:
            raise AgentError("MALFORMED", "window.end", f"must be after start ({start}), got {end}")
        if end > FOREVER:
            raise AgentError("MALFORMED", "window.end", "too far in the future")
        now = self.now()
        if start < now - self.grace:
            raise AgentError(
                "WINDOW_IN_PAST", "window.start", f"{start} is in the past (now {now})"
            )
        return start, end

    def _check_spans(self, spans: Sequence[tuple[str, str]]) -> None:
        if len(spans) > MAX_SPANS:
            raise AgentError("MALFORMED", "spans", f"at most {MAX_SPANS} per message")
        for i, (entry, exit) in enumerate(spans):
            for name, point in (("entry", entry), ("exit", exit)):
                if point not in self.points:
                    raise AgentError(
                        "UNKNOWN_POINT",
                        f"spans[{i}].{name}",
                        f"domain {self.domain} has no point {point!r}",
                    )


def _as_agent_error(exc: InputError) -> AgentError:
    if isinstance(exc, AgentError):
        return exc
    return AgentError("MALFORMED", exc.field, exc.message)


def _whole(changes: dict[str, tuple[Hold, bool]], hold: Hold) -> bool:
    """A hold made earlier in the same batch still needs its whole row written."""
    earlier = changes.get(hold.transaction)
    return earlier is not None and earlier[1]
