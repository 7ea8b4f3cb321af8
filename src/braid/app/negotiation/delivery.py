"""Phase 2's second half: tell every participant the decision until all have heard it.

The decision is already durable when this runs. Commit, Abort and Release
are idempotent at the agents, so re-sending after a crash or a lost reply is
always safe. A participant that cannot be reached stays pending and the
finisher tries again, however long it is away: it voted yes, and its hold
waits for the decision.

A participant that answers a Commit with CONFLICT or UNKNOWN_TRANSACTION
cannot honour it (its operator aborted the hold, or it lost its store): the
reservation did not happen as decided. That domain is recorded as having
refused, and a release of every other participant is decided (durably) and
delivered, so no domain keeps a part of a reservation that is not whole.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from braid.app.negotiation.ports import AgentPool, CallFailedError, DecisionLog
from braid.app.negotiation.results import NegotiationResult, TraceEvent
from braid.app.negotiation.volume_log import is_volume_body, step_plan
from braid.app.periodic import Periodic
from braid.core.negotiation.result_rules import SwitchPlan
from braid.core.negotiation.transaction import (
    RELEASE_LABEL,
    Decision,
    Phase,
    Transaction,
    in_doubt,
)

log = logging.getLogger(__name__)

# Answers that settle a participant for good even though they are errors: the
# hold already ended (or was never made) and re-sending cannot change it. For
# a Commit that is a refusal; for Abort and Release the capacity is free.
_SETTLED = ("ERROR_CODE_CONFLICT", "ERROR_CODE_UNKNOWN_TRANSACTION")


class Delivery:
    def __init__(self, agents: AgentPool, decisions: DecisionLog) -> None:
        self.agents = agents
        self.decisions = decisions
        self._unfinished: dict[str, Transaction] = {}
        # Each unfinished commit's rule plan by domain: every Commit carries the
        # domain's part, for its agent's southbound.
        self._plans: dict[str, dict[str, tuple[SwitchPlan, ...]]] = {}
        self._lock = threading.Lock()

    def deliver(
        self,
        tx: Transaction,
        note: Callable[[TraceEvent], None],
        *,
        record: bool = True,
        switches: Sequence[SwitchPlan] | None = None,
    ) -> None:
        """Send the decision to every participant that has not acknowledged it.

        The acknowledgements are recorded without a sync of their own (a lost
        one only means a harmless re-send after a crash); `record=False` leaves
        the write to the caller, which adds the reservation's result to it.
        `switches` is a commit's rule plan (else read from the log when needed).
        """
        assert tx.decision is not None, "decide (durably) before delivering"
        verb = tx.decision.value
        with self.agents.together():
            if tx.decision is Decision.COMMIT:
                plans = self._plans_of(tx, switches)
                pending = {
                    d: self.agents.commit(d, tx.id, tx.token, plans.get(d, ()))
                    for d in tx.pending()
                }
            else:
                send = self.agents.abort if tx.decision is Decision.ABORT else self.agents.release
                pending = {d: send(d, tx.id, tx.token) for d in tx.pending()}
        refusals = []
        for domain, call in pending.items():
            try:
                state = call.result()
                tx.record_ack(domain)
                note(TraceEvent(verb, domain, f"ack ({_state(state)})"))
            except CallFailedError as exc:
                if exc.error not in _SETTLED:
                    note(TraceEvent(verb, domain, f"not reached ({exc.status}); will retry"))
                elif tx.decision is Decision.COMMIT and not self.released(tx):
                    tx.record_refusal(domain)
                    refusals.append(domain)
                    note(TraceEvent(verb, domain, f"cannot commit: {exc.message}"))
                else:
                    tx.record_ack(domain)
                    note(TraceEvent(verb, domain, f"settled with error: {exc.message}"))
        if record or refusals:
            self.decisions.save(tx, durable=bool(refusals))
        self._track(tx)
        if refusals:
            why = f"{', '.join(refusals)} could not honour the commit"
            self.release(tx, why, note)

    def release(
        self, tx: Transaction, reason: str, note: Callable[[TraceEvent], None]
    ) -> Transaction:
        """Free a committed transaction in every domain that may hold it: the release is
        decided durably (it supersedes the commit, which nobody needs to hear any more),
        then delivered; a domain that is down hears it from the finisher."""
        with self._lock:
            tx = self._unfinished.pop(tx.key, tx)  # the copy the finisher may be sending
            self._plans.pop(tx.key, None)
        known = self.decisions.transaction(f"{tx.key}/{RELEASE_LABEL}")
        if known is not None:
            if known.phase is not Phase.DONE:
                self.deliver(known, note)
            return known
        release = tx.release(reason)
        tx.supersede()
        self.decisions.save(release)
        self.decisions.save(tx, durable=False)
        note(TraceEvent("release", "", f"{', '.join(release.participants)}: {reason}"))
        self.deliver(release, note)
        return release

    def hand_over(
        self, old: Transaction, release: Transaction, note: Callable[[TraceEvent], None]
    ) -> None:
        """A modify's second step: the new version is committed (delivered first, so each
        domain has the new booking and its rules before the old go); now release the old
        version, whose release was decided durably with the new version's commit."""
        with self._lock:
            self._unfinished.pop(old.key, None)  # its commit is superseded
            self._plans.pop(old.key, None)
        note(TraceEvent("release", "", f"old version {old.id}: {', '.join(release.participants)}"))
        self.deliver(release, note)

    def _plans_of(
        self, tx: Transaction, switches: Sequence[SwitchPlan] | None
    ) -> dict[str, tuple[SwitchPlan, ...]]:
        """The commit's rule plan by domain: as given, remembered, or from the log."""
        with self._lock:
            known = self._plans.get(tx.key)
        if known is not None and switches is None:
            return known
        if switches is None:
            switches = self._logged_plan(tx)
        plans: dict[str, tuple[SwitchPlan, ...]] = {}
        for plan in switches:
            plans[plan.domain] = (*plans.get(plan.domain, ()), plan)
        with self._lock:
            self._plans[tx.key] = plans
        return plans

    def _logged_plan(self, tx: Transaction) -> tuple[SwitchPlan, ...]:
        """The rule plan the decision log keeps for `tx`: its reservation's, or a volume
        step's (app/negotiation/volume_log); none for any other transaction."""
        body = self.decisions.result(tx.reservation)
        if body is None:
            return ()
        if is_volume_body(body):
            return step_plan(body, tx.id)
        found = NegotiationResult.from_dict(body)
        return found.switches if found.transaction == tx.id else ()

    def released(self, tx: Transaction) -> bool:
        return self.decisions.transaction(f"{tx.key}/{RELEASE_LABEL}") is not None

    def _track(self, tx: Transaction) -> None:
        with self._lock:
            if tx.phase is Phase.DONE:
                self._unfinished.pop(tx.key, None)
                self._plans.pop(tx.key, None)
            else:
                self._unfinished[tx.key] = tx

    def recover(self) -> list[Transaction]:
        """After a restart: load every in-doubt transaction from the log and return them."""
        found = in_doubt(self.decisions.unfinished())
        with self._lock:
            for tx in found:
                self._unfinished[tx.key] = tx
        for tx in found:
            self.decisions.save(tx)  # a transaction decided ABORT just now is now durable
        return found

    def finish(self) -> int:
        """Re-send every pending decision once; returns how many transactions remain open."""
        with self._lock:
            open_now = list(self._unfinished.values())
        for tx in open_now:
            self.deliver(tx, _log_event)
        with self._lock:
            return len(self._unfinished)

    def open_transactions(self) -> list[str]:
        with self._lock:
            return sorted(self._unfinished)


def _state(name: str) -> str:
    return name.removeprefix("HOLD_STATE_").lower()


def _log_event(event: TraceEvent) -> None:
    log.info("recovery %s", event.line())


class Finisher(Periodic):
    """A background thread that calls `Delivery.finish` every `period` seconds (a crash
    there would strand holds: it keeps finishing later)."""

    def __init__(self, delivery: Delivery, period: float = 1.0) -> None:
        super().__init__(delivery.finish, period, "braid-finisher")
