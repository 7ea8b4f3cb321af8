"""The orchestrator's side of one two-phase commit (pure state machine, no I/O).

Phases: PREPARING (logged before the first ReservationPrep leaves, votes
coming in) -> DECIDED (commit or abort written down; the decision is durable
before anyone is told) -> DONE (every participant acknowledged the decision).
The decision is COMMIT only when every participant voted yes; a no, a
timeout or an error is a no. Once decided, the decision never changes:
recovery re-sends it until every participant has acknowledged. A
transaction still PREPARING after a restart is presumed aborted.

A participant that answers a COMMIT with "cannot" (its operator forced an
abort there) is `refused`: the reservation did not happen, and the others
are released. RELEASE is the decision of a second transaction, labelled
"release", that frees a committed reservation in every domain (a cancel);
once it exists it supersedes the commit.

A modify (make-before-break) negotiates the reservation's new version as a
transaction of its own; when that one is decided COMMIT, the release of the
old version is decided with it (`succession`) and both are written in one
durable write, so the old is released if and only if the new is committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Decision(Enum):
    COMMIT = "commit"
    ABORT = "abort"
    RELEASE = "release"


RELEASE_LABEL = "release"


class Phase(Enum):
    PREPARING = "preparing"
    DECIDED = "decided"
    DONE = "done"


class TransactionError(ValueError):
    """An event that does not fit the transaction's state (a programming error)."""


@dataclass(frozen=True, slots=True)
class Vote:
    yes: bool
    reason: str = ""


@dataclass
class Transaction:
    """One reservation's two-phase commit with its participant domains."""

    id: str
    reservation: str
    participants: tuple[str, ...]
    token: str
    votes: dict[str, Vote] = field(default_factory=dict)
    decision: Decision | None = None
    acked: set[str] = field(default_factory=set)
    reason: str = ""
    # Participants that answered COMMIT with "cannot" (see the module's note).
    refused: set[str] = field(default_factory=set)
    # Tells apart two commit rounds of one negotiation in the decision log
    # (the abort of unused Preps, then the reservation's own); agents see `id`.
    label: str = ""

    @property
    def key(self) -> str:
        return f"{self.id}/{self.label}" if self.label else self.id

    @property
    def phase(self) -> Phase:
        if self.decision is None:
            return Phase.PREPARING
        return Phase.DONE if self.acked >= set(self.participants) else Phase.DECIDED

    def record_vote(self, domain: str, vote: Vote) -> None:
        self._require_participant(domain)
        if self.decision is not None:
            raise TransactionError(f"{self.id}: vote from {domain} after the decision")
        self.votes[domain] = vote

    def decide(self) -> Decision:
        """COMMIT iff every participant voted yes; missing votes count as no."""
        if self.decision is not None:
            return self.decision
        noes = [d for d in self.participants if not self.votes.get(d, Vote(False)).yes]
        if noes:
            first = noes[0]
            vote = self.votes.get(first)
            why = vote.reason if vote is not None and vote.reason else "no vote in time"
            self.reason = f"{first} voted no: {why}"
            self.decision = Decision.ABORT
        else:
            self.decision = Decision.COMMIT
        return self.decision

    def abort(self, reason: str) -> Decision:
        """Decide ABORT before all votes are in (a timeout, a failed composition)."""
        if self.decision is None:
            self.decision = Decision.ABORT
            self.reason = reason
        return self.decision

    def record_ack(self, domain: str) -> None:
        self._require_participant(domain)
        if self.decision is None:
            raise TransactionError(f"{self.id}: acknowledgement from {domain} before the decision")
        self.acked.add(domain)

    def record_refusal(self, domain: str) -> None:
        """A participant cannot honour the COMMIT: settled (re-sending changes nothing)."""
        self.record_ack(domain)
        self.refused.add(domain)

    def supersede(self) -> None:
        """A release took over: nobody needs to hear this decision any more."""
        self.acked = set(self.participants)

    def release(self, reason: str) -> Transaction:
        """The transaction that frees this one's bookings in every domain that may hold them."""
        if self.decision is not Decision.COMMIT:
            raise TransactionError(f"{self.id}: only a committed transaction is released")
        holders = tuple(d for d in self.participants if d not in self.refused)
        out = Transaction(
            self.id, self.reservation, holders, self.token, label=RELEASE_LABEL, reason=reason
        )
        out.decision = Decision.RELEASE
        return out

    def pending(self) -> tuple[str, ...]:
        """Participants that still have to hear the decision."""
        if self.decision is None:
            return ()
        return tuple(d for d in self.participants if d not in self.acked)

    def _require_participant(self, domain: str) -> None:
        if domain not in self.participants:
            raise TransactionError(f"{self.id}: {domain} is not a participant")

    # -- durable form --------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "reservation": self.reservation,
            "participants": list(self.participants),
            "token": self.token,
            "votes": {d: v.yes for d, v in self.votes.items()},
            "decision": None if self.decision is None else self.decision.value,
            "acked": sorted(self.acked),
            "reason": self.reason,
            "label": self.label,
            "refused": sorted(self.refused),
        }

    @staticmethod
    def from_record(record: Mapping[str, Any]) -> Transaction:
        votes: Mapping[str, bool] = record.get("votes", {})
        decision = record.get("decision")
        return Transaction(
            id=str(record["id"]),
            reservation=str(record["reservation"]),
            participants=tuple(record["participants"]),
            token=str(record["token"]),
            votes={d: Vote(bool(yes)) for d, yes in votes.items()},
            decision=None if decision is None else Decision(decision),
            acked=set(record.get("acked", ())),
            reason=str(record.get("reason", "")),
            label=str(record.get("label", "")),
            refused=set(record.get("refused", ())),
        )


def succession(new: Transaction, old: Transaction, reason: str) -> Transaction:
    """The release of `old` that a committed `new` version of the same reservation brings.

    `old` is superseded (nobody needs its commit any more); the caller writes
    `new`, the release and `old` together, in one durable write.
    """
    if new.decision is not Decision.COMMIT:
        raise TransactionError(f"{new.id}: only a committed version replaces another")
    if new.reservation != old.reservation or new.id == old.id:
        raise TransactionError(f"{new.id}: does not replace {old.id} of {old.reservation!r}")
    release = old.release(reason)
    old.supersede()
    return release


def in_doubt(transactions: Iterable[Transaction]) -> list[Transaction]:
    """Transactions whose participants do not all know the outcome yet.

    A transaction never decided (the orchestrator died while collecting votes)
    is decided ABORT here: no Commit was ever sent for it, so abort is safe.
    """
    out = []
    for tx in transactions:
        if tx.decision is None:
            tx.abort("the orchestrator restarted before deciding")
        if tx.phase is Phase.DECIDED:
            out.append(tx)
    return out
