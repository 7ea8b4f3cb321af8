"""The orchestrator: one multi-domain reservation, from domain paths to commit.

Phase 1 asks the visible domains on the candidate domain paths for offers
(ReqOffers/SendOffers) and composes a split with the chosen strategy (equal
splitting, partial offers, full offers; blind domains are asked concretely
with a ReservationPrep). Phase 2 prepares every participant, decides, writes
the decision durably, and only then sends Commit or Abort. A domain asked
during composition but left out of the final split is aborted.

The transaction is in the decision log before its first Prep leaves (with
every domain that may be asked), so a restart finds and aborts it if it was
never decided; the decision is written together with the whole result
(paths, shares, VLANs, rule plan), so a lookup after any crash returns it.

A modify negotiates the reservation's new version the same way, as a fresh
transaction that each agent may place over the old bookings; its COMMIT and
the old version's RELEASE are one durable write, and the release leaves only
after the new version's Commits (see docs/multidomain.md, "Modify").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from braid.app.errors import RejectedError
from braid.app.negotiation.caches import RouteCaches
from braid.app.negotiation.config import OrchestratorConfig
from braid.app.negotiation.context import FaultHooks
from braid.app.negotiation.delivery import Delivery
from braid.app.negotiation.modification import Modification, modified
from braid.app.negotiation.ports import AgentPool, DecisionLog
from braid.app.negotiation.results import (
    GRACE_SECONDS,
    NegotiationRequest,
    NegotiationResult,
    TraceEvent,
    check_ends,
)
from braid.app.negotiation.run import NegotiationRun
from braid.app.negotiation.settlement import answer, current
from braid.app.negotiation.volume import (
    VolumeOutcome,
    VolumeRequest,
    cancel_stored,
    reserve_volume,
)
from braid.app.negotiation.volume_log import is_volume_body
from braid.app.negotiation.volume_modify import VolumeChange, modify_volume
from braid.core.errors import InputError
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.transaction import RELEASE_LABEL, Transaction

log = logging.getLogger(__name__)


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
        self.agents = agents
        self.decisions = decisions
        self.config = config or OrchestratorConfig()
        self.clock = clock
        self.delivery = Delivery(agents, decisions)
        # Called at the protocol's critical moments (fault tests).
        self.hooks = FaultHooks()
        # The view's route caches, replaced with the view (so never stale).
        self.caches = RouteCaches(view)
        self._busy: set[str] = set()
        # Transactions being negotiated now (logged, not yet decided): "pending" to
        # a participant that asks; any other undecided one is presumed aborted.
        self._live: set[str] = set()
        self._lock = threading.Lock()

    @property
    def view(self) -> GlobalView:
        """The domain graph negotiated on now."""
        return self.caches.view

    def reserve(self, request: NegotiationRequest) -> NegotiationResult:
        """Negotiate `request`; a repeated id returns the first outcome (idempotent)."""
        self._check(request)
        with self._claimed(request.id, InputError("id", self._being_negotiated(request.id))):
            known = self.lookup(request.id)
            if known is not None:
                return known
            return self._negotiate(request, None)

    def reserve_volume(self, request: VolumeRequest) -> VolumeOutcome:
        """A volume by a deadline (app/negotiation/volume), one negotiation of an id at a
        time: a second one beside it could otherwise book the same id twice."""
        with self._claimed(request.id, InputError("id", self._being_negotiated(request.id))):
            return reserve_volume(self, request)

    def cancel_volume(self, reservation: str) -> dict[str, Any] | None:
        """Release every step of a volume (idempotent), never beside a modify of it: its
        view after, None if unknown."""
        with self._claimed(reservation):
            return cancel_stored(self, reservation)

    def modify(
        self,
        reservation: str,
        change: Modification,
        admit: Callable[[NegotiationRequest], None] | None = None,
    ) -> NegotiationResult | None:
        """Make-before-break: negotiate the changed reservation as a new transaction beside
        the old bookings; if it commits, the old version's release is decided with it (one
        durable write) and sent once the new version is committed. None if unknown; a
        result that is not a success is a refusal, and the old version stands unchanged.

        `admit` sees the new request before anything is asked (a policy; it raises).
        """
        with self._claimed(reservation):
            result = self.lookup(reservation)
            if result is None:
                return None
            if result.state != "committed":
                raise RejectedError(f"reservation {reservation!r} is {result.state}: not modified")
            if result.request is None:  # its result was written before modify existed
                raise RejectedError(
                    f"reservation {reservation!r} keeps no request to modify; "
                    "cancel it and reserve anew"
                )
            request = modified(result.request, change, int(self.clock()))
            self._check(request)
            if admit is not None:
                admit(request)
            old = self.decisions.transaction(result.transaction)
            assert old is not None, "a committed result has its transaction"
            return self._negotiate(request, old)

    def modify_volume(self, reservation: str, change: VolumeChange) -> VolumeOutcome | None:
        """Make-before-break for a volume (app/negotiation/volume_modify): the new steps
        commit and every old step is released, or nothing changes. None if no volume."""
        with self._claimed(reservation):
            return modify_volume(self, reservation, change)

    @contextmanager
    def _claimed(self, reservation: str, busy: Exception | None = None) -> Iterator[None]:
        """`reservation` held for one negotiation, modify or cancel at a time; `busy` (by
        default a RejectedError) if another holds it."""
        with self._lock:
            if reservation in self._busy:
                raise busy or RejectedError(self._being_negotiated(reservation))
            self._busy.add(reservation)
        try:
            yield
        finally:
            with self._lock:
                self._busy.discard(reservation)

    @staticmethod
    def _being_negotiated(reservation: str) -> str:
        return f"reservation {reservation!r} is being negotiated"

    def _negotiate(
        self, request: NegotiationRequest, replaces: Transaction | None
    ) -> NegotiationResult:
        """One reservation (or a modify's new version), with the retries below."""
        run = NegotiationRun(self, request, base=request, replaces=replaces)
        try:
            result = self._run(run)
            # A split refused only because a link ran out of VLANs may fit on fewer
            # paths (fewer VLANs per link): try again, each time with one path less.
            while (fewer := run.fewer_paths()) is not None:
                with self._lock:
                    self._live.discard(run.tx_id)
                prior = run.prior or run.vlan_refusal()
                smaller = replace(request, max_paths=fewer)
                run = NegotiationRun(self, smaller, prior=prior, base=request, replaces=replaces)
                run.note("retry", "", f"{run.prior}; again with at most {fewer} path(s)")
                result = self._run(run)
            return result
        finally:
            with self._lock:
                self._live.discard(run.tx_id)

    def _run(self, run: NegotiationRun) -> NegotiationResult:
        """One negotiation, its outcome written to the log (a refused modify's outcome is
        not: the reservation's result stays the old version's)."""
        request = run.request
        result = run.execute()
        keep = run.replaces is None or result.success
        body = result.to_dict() if keep else None
        if run.decided is not None:
            # The acknowledgements and the trace in one write (the decision is synced; a
            # crash before this write only means the commits are sent again).
            self.decisions.save(run.decided, result=body, durable=False, later=True)
            if run.decided.refused:
                return self.lookup(request.id) or result
            return current(result, run.decided, None)
        elif run.begun is not None:  # failed before deciding; every Prep was aborted
            run.begun.abort(result.reason)
            run.begun.supersede()
            self.decisions.save(run.begun, result=body, durable=False)
        elif body is not None:
            self.decisions.save_result(request.id, body)
        return result

    def cancel(self, reservation: str) -> NegotiationResult | None:
        """Release a committed reservation in every domain (idempotent); None if unknown.

        The release is decided durably before any domain hears it, so a crash in
        the middle is finished on restart; a domain that is down hears it later.
        """
        with self._claimed(reservation):
            result = self.lookup(reservation)
            if result is None or result.state != "committed":
                return result
            main = self.decisions.transaction(result.transaction)
            assert main is not None, "a committed result has its transaction"
            self.delivery.release(main, "cancelled", _log_event)
            return self.lookup(reservation)

    def mark_live(self, transaction: str) -> None:
        """A negotiation logged its transaction: it is being negotiated here."""
        with self._lock:
            self._live.add(transaction)

    def forget_live(self, transaction: str) -> None:
        """A transaction given up before its decision (a wrong guess, aborted)."""
        with self._lock:
            self._live.discard(transaction)

    def decision(self, transaction: str, token: str, domain: str) -> str:
        """A participant's question: "commit", "abort" or "pending" (see settlement.answer)."""
        with self._lock:  # before reading the log: a decision written meanwhile is seen
            live = transaction in self._live
        main = self.decisions.transaction(transaction)
        if main is not None and main.token != token:
            raise InputError("token", f"does not belong to transaction {transaction!r}")
        release = self.decisions.transaction(f"{transaction}/{RELEASE_LABEL}")
        return answer(main, release, domain, live)

    def update_view(self, view: GlobalView) -> None:
        """Negotiate on a new domain graph from now on (the agents published a change)."""
        caches = RouteCaches(view)
        with self._lock:
            self.caches = caches

    def lookup(self, reservation: str) -> NegotiationResult | None:
        """The outcome as stored, with its present status and what each domain holds."""
        known = self.decisions.result(reservation)
        if known is None:
            return None
        if is_volume_body(known):  # see app/negotiation/volume.lookup_volume
            raise RejectedError(
                f"reservation {reservation!r} is a volume reservation "
                "(a modify changes its volume, deadline or max_rate)"
            )
        result = NegotiationResult.from_dict(known)
        if not result.success or not result.transaction:
            return result
        main = self.decisions.transaction(result.transaction)
        release = self.decisions.transaction(f"{result.transaction}/{RELEASE_LABEL}")
        return current(result, main, release)

    def _check(self, r: NegotiationRequest) -> None:
        if not r.id or len(r.id) > 64:
            raise InputError("id", "must be 1-64 characters")
        check_ends(self.view, (r.src_domain, r.src_point), (r.dst_domain, r.dst_point))
        if r.bandwidth <= 0:
            raise InputError("bandwidth", "must be positive")
        if r.end <= r.start:
            raise InputError("window.end", f"must be after start ({r.start})")
        if r.start < int(self.clock()) - GRACE_SECONDS:
            raise InputError("window.start", "is in the past")
        if r.max_paths < 0 or r.max_paths > 8:
            raise InputError("max_paths", "must be between 1 and 8 (0: the default)")


def _log_event(event: TraceEvent) -> None:
    log.info("cancel %s", event.line())
