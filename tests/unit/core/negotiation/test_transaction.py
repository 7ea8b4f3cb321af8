"""The orchestrator's two-phase-commit state machine."""

from __future__ import annotations

import pytest

from braid.core.negotiation.transaction import (
    Decision,
    Phase,
    Transaction,
    TransactionError,
    Vote,
    in_doubt,
)


def tx() -> Transaction:
    return Transaction("t1", "r1", ("a", "b"), "token-0123456789abcdef")


def phase_of(t: Transaction) -> Phase:
    """The phase now (read through a call, so a type checker does not pin it)."""
    return t.phase


def test_all_yes_commits_and_is_done_once_everyone_acked() -> None:
    t = tx()
    t.record_vote("a", Vote(True))
    t.record_vote("b", Vote(True))
    assert phase_of(t) is Phase.PREPARING
    assert t.decide() is Decision.COMMIT
    assert phase_of(t) is Phase.DECIDED and t.pending() == ("a", "b")
    t.record_ack("a")
    assert t.pending() == ("b",)
    t.record_ack("b")
    assert phase_of(t) is Phase.DONE and t.pending() == ()


def test_one_no_or_a_missing_vote_aborts_with_the_reason() -> None:
    t = tx()
    t.record_vote("a", Vote(True))
    t.record_vote("b", Vote(False, "link full"))
    assert t.decide() is Decision.ABORT
    assert t.reason == "b voted no: link full"
    silent = tx()
    silent.record_vote("a", Vote(True))
    assert silent.decide() is Decision.ABORT
    assert "no vote in time" in silent.reason


def test_the_decision_never_changes() -> None:
    t = tx()
    t.abort("timeout")
    with pytest.raises(TransactionError):
        t.record_vote("a", Vote(True))
    assert t.decide() is Decision.ABORT
    assert t.abort("again") is Decision.ABORT and t.reason == "timeout"


def test_events_from_strangers_or_out_of_order_are_refused() -> None:
    t = tx()
    with pytest.raises(TransactionError):
        t.record_vote("mallory", Vote(True))
    with pytest.raises(TransactionError):
        t.record_ack("a")


def test_the_durable_record_round_trips() -> None:
    t = tx()
    t.record_vote("a", Vote(True))
    t.record_vote("b", Vote(True))
    t.decide()
    t.record_ack("a")
    back = Transaction.from_record(t.to_record())
    assert (back.decision, back.pending(), back.token) == (Decision.COMMIT, ("b",), t.token)


def test_recovery_finishes_decided_and_aborts_undecided() -> None:
    decided = tx()
    decided.record_vote("a", Vote(True))
    decided.record_vote("b", Vote(True))
    decided.decide()
    undecided = Transaction("t2", "r2", ("a",), "token-0123456789abcdef")
    done = Transaction("t3", "r3", ("a",), "token-0123456789abcdef")
    done.abort("x")
    done.record_ack("a")
    found = in_doubt([decided, undecided, done])
    assert [t.id for t in found] == ["t1", "t2"]
    assert undecided.decision is Decision.ABORT
