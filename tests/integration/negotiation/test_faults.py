"""Crashes, unreachable and slow agents: nothing leaks, nothing is overbooked, all agree."""

from __future__ import annotations

import time

import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import (
    TOKEN,
    G,
    assert_ledgers_agree,
    reservation,
    states,
    wait_until,
)

pytestmark = pytest.mark.slow


def _prep(cluster: LocalCluster, domain: str, tx: str, entry: str, exit: str) -> pb.PrepVote:
    now = int(time.time())
    vote: pb.PrepVote = cluster.agent(domain).Prepare(
        pb.ReservationPrep(
            transaction_id=tx,
            token=TOKEN,
            window=pb.Window(start=now + 60, end=now + 600),
            segments=[pb.Segment(span=pb.Span(entry=entry, exit=exit), bandwidth_bps=3 * G)],
            hold_seconds=60,
        ),
        timeout=5,
    )
    return vote


def test_an_agent_restarted_after_prep_keeps_its_hold(cluster: LocalCluster) -> None:
    assert _prep(cluster, "w1", "tx-restart", "w1-x", "w1-y").yes
    cluster.kill("w1")
    cluster.start_agent("w1")
    assert states(cluster, "tx-restart") == {"w1": pb.HOLD_STATE_HELD}
    ack = cluster.agent("w1").CommitHold(pb.Commit(transaction_id="tx-restart", token=TOKEN))
    assert ack.state == pb.HOLD_STATE_COMMITTED
    assert_ledgers_agree(cluster, [], {"tx-restart": frozenset({"w1"})})


def test_an_agent_that_dies_before_commit_is_committed_when_it_returns(
    cluster: LocalCluster,
) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "exit-on-commit"})
    reply = cluster.reserve(reservation("r-dies", 3, paths=1))
    assert reply.success, reply.reason  # the decision was COMMIT and is durable
    assert any(e.domain == "w1" and "retry" in e.text for e in reply.trace)
    assert cluster.wait_exit("w1") == 70
    cluster.start_agent("w1")  # back, without the fault; the finisher re-sends Commit
    done = wait_until(lambda: states(cluster, reply.transaction_id).get("w1") == 2)
    assert done, states(cluster, reply.transaction_id)
    assert_ledgers_agree(cluster, [reply])


def test_the_orchestrator_finishes_its_decision_after_a_crash(cluster: LocalCluster) -> None:
    import grpc

    cluster.terminate("orchestrator")
    cluster.start_orchestrator(env={"BRAID_FAULT_ORCHESTRATOR": "exit-after-decide"})
    with pytest.raises(grpc.RpcError):
        cluster.reserve(reservation("r-crash", 3, paths=1))
    assert cluster.wait_exit("orchestrator") == 70
    held = [d for d, r in cluster.reports().items() for t in r.transactions if t.state == 1]
    assert sorted(held) == ["site-a", "site-b", "w1"]  # prepared, decided, never told
    cluster.start_orchestrator()  # recovery re-sends COMMIT
    answer = cluster.orchestrator().Lookup(pb.ReservationQuery(id="r-crash"), timeout=5)
    assert answer.success
    committed = {answer.transaction_id: frozenset({"site-a", "w1", "site-b"})}
    assert_ledgers_agree(cluster, [], committed)


def test_an_unreachable_agent_aborts_with_the_reason(cluster: LocalCluster) -> None:
    cluster.kill("w1")
    reply = cluster.reserve(reservation("r-down", 3, strategy=pb.STRATEGY_EQUAL_SPLIT))
    assert not reply.success
    assert "w1 not reached" in reply.reason
    assert_ledgers_agree(cluster, [reply])


def test_a_slow_agent_times_out_and_nothing_stays_held(cluster: LocalCluster) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "slow-prep=2.5"})
    reply = cluster.reserve(reservation("r-slow", 3, paths=1))
    assert not reply.success
    assert "DEADLINE_EXCEEDED" in reply.reason
    time.sleep(3)  # let the late Prep land: the Abort that overtook it refuses it
    assert states(cluster, reply.transaction_id).get("w1") == pb.HOLD_STATE_ABORTED
    assert_ledgers_agree(cluster, [reply])
