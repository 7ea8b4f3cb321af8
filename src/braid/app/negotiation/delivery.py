"""Phase 2's second half: tell every participant the decision until all have heard it.

The decision is already durable when this runs. Commit and Abort are
idempotent at the agents, so re-sending after a crash or a lost reply is
always safe. A participant that cannot be reached stays pending and the
finisher tries again; an Abort that never arrives is covered by the hold's
expiry at the agent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from braid.app.negotiation.ports import AgentPool, CallFailedError, DecisionLog
from braid.app.negotiation.results import TraceEvent
from braid.core.negotiation.transaction import Decision, Phase, Transaction, in_doubt

log = logging.getLogger(__name__)

# Answers that settle a participant for good even though they are errors: the
# hold already ended (expired, or never made) and re-sending cannot change it.
_SETTLED = ("ERROR_CODE_CONFLICT", "ERROR_CODE_UNKNOWN_TRANSACTION")


class Delivery:
    def __init__(self, agents: AgentPool, decisions: DecisionLog) -> None:
        self.agents = agents
        self.decisions = decisions
        self._unfinished: dict[str, Transaction] = {}
        self._lock = threading.Lock()

    def deliver(
        self, tx: Transaction, note: Callable[[TraceEvent], None], *, record: bool = True
    ) -> None:
        """Send the decision to every participant that has not acknowledged it.

        The acknowledgements are recorded without a sync of their own (a lost
        one only means a harmless re-send after a crash); `record=False` leaves
        the write to the caller, which adds the reservation's result to it.
        """
        assert tx.decision is not None, "decide (durably) before delivering"
        send = self.agents.commit if tx.decision is Decision.COMMIT else self.agents.abort
        verb = tx.decision.value
        pending = {d: send(d, tx.id, tx.token) for d in tx.pending()}
        for domain, call in pending.items():
            try:
                state = call.result()
                tx.record_ack(domain)
                note(TraceEvent(verb, domain, f"ack ({_state(state)})"))
            except CallFailedError as exc:
                if exc.error in _SETTLED:
                    tx.record_ack(domain)
                    note(TraceEvent(verb, domain, f"settled with error: {exc.message}"))
                else:
                    note(TraceEvent(verb, domain, f"not reached ({exc.status}); will retry"))
        if record:
            self.decisions.save(tx, durable=False)
        with self._lock:
            if tx.phase is Phase.DONE:
                self._unfinished.pop(tx.key, None)
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


class Finisher:
    """A background thread that calls `Delivery.finish` every `period` seconds."""

    def __init__(self, delivery: Delivery, period: float = 1.0) -> None:
        self._delivery = delivery
        self._period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="braid-finisher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            try:
                self._delivery.finish()
            except Exception:  # keep finishing later; a crash here would strand holds
                log.exception("finishing in-doubt transactions failed")
