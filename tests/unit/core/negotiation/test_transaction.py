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
    succession,
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


def committed(tid: str, participants: tuple[str, ...]) -> Transaction:
    t = Transaction(tid, "r1", participants, f"token-{tid}-0123456789abcdef")
    for domain in participants:
        t.record_vote(domain, Vote(True))
    t.decide()
    return t


def test_a_committed_new_version_releases_the_old_in_every_domain_it_holds() -> None:
    old = committed("t1", ("a", "w1", "b"))
    old.record_ack("a")  # w1 and b have not acknowledged the old commit yet
    new = committed("t2", ("a", "w2", "b"))
    release = succession(new, old, "replaced by t2")
    assert release.decision is Decision.RELEASE and release.key == "t1/release"
    assert release.participants == ("a", "w1", "b") and release.token == old.token
    assert phase_of(old) is Phase.DONE  # superseded: its commit need not be heard any more
    assert phase_of(new) is Phase.DECIDED and new.pending() == ("a", "w2", "b")
    assert in_doubt([new, release, old]) == [new, release]  # recovery re-sends both, new first


def test_only_a_committed_version_of_the_same_reservation_replaces_another() -> None:
    old = committed("t1", ("a", "b"))
    undecided = Transaction("t2", "r1", ("a", "b"), "token-t2-0123456789abcdef")
    with pytest.raises(TransactionError):
        succession(undecided, old, "x")
    aborted = Transaction("t3", "r1", ("a",), "token-t3-0123456789abcdef")
    aborted.abort("no")
    with pytest.raises(TransactionError):
        succession(aborted, old, "x")
    other = committed("t4", ("a", "b"))
    other.reservation = "r2"
    with pytest.raises(TransactionError):
        succession(other, old, "x")
    with pytest.raises(TransactionError):
        succession(old, old, "x")
    assert phase_of(old) is Phase.DECIDED  # none of that touched it
