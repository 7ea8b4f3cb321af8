"""Batches of several transactions' messages: each item stands alone, all are durable together."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.decision_log import SqliteDecisionLog
from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.adapters.rpc.batching import Coalescer, ItemPending
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.agent.messages import AbortCall, CommitCall, PrepCall, Vote
from braid.app.agent.service import AgentService
from braid.app.negotiation.ports import CallFailedError
from braid.bootstrap.local_cluster import LocalCluster
from braid.core.negotiation.holds import HoldState, SegmentAsk
from braid.core.negotiation.transaction import Transaction
from braid.core.negotiation.transaction import Vote as TxVote
from tests.integration.negotiation.conftest import SMALL, TOKEN, G, assert_ledgers_agree, states


@pytest.fixture
def topology(tmp_path: Path) -> Path:
    source = tmp_path / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    return source


def _service(topology: Path, store: Path) -> AgentService:
    return AgentService(load_multidomain(topology), "w1", SqliteHoldStore(store))


def _prep(tx: str, gbps: int, token: str = TOKEN) -> PrepCall:
    now = int(time.time())
    return PrepCall(
        tx, token, (now + 60, now + 600), (SegmentAsk("w1-x", "w1-y", gbps * G, 0),), 60, True
    )


def test_one_refused_item_leaves_the_rest_of_the_batch_standing(
    topology: Path, tmp_path: Path
) -> None:
    service = _service(topology, tmp_path / "w1.db")
    outcomes = service.exchange(
        [
            _prep("tx-a", 4),
            _prep("tx-b", 20),  # more than the 10G core: a no vote
            CommitCall("tx-unknown", TOKEN),  # rejected: never prepared
            _prep("tx-c", 1, token="short"),  # rejected: not a token
            _prep("tx-d", 5),
        ]
    )
    votes = [o.answer for o in outcomes]
    assert isinstance(votes[0], Vote) and votes[0].yes
    assert isinstance(votes[1], Vote) and not votes[1].yes
    assert [o.error.code if o.error else "" for o in outcomes] == [
        "", "", "UNKNOWN_TRANSACTION", "BAD_TOKEN", ""
    ]  # fmt: skip
    assert isinstance(votes[4], Vote) and votes[4].yes
    commits = service.exchange([CommitCall("tx-a", TOKEN), AbortCall("tx-d", TOKEN)])
    assert [o.error for o in commits] == [None, None]
    service.store.close()

    restarted = _service(topology, tmp_path / "w1.db")  # what the store kept
    kept = {h.transaction: h.state for h in restarted.status()}
    assert kept == {"tx-a": HoldState.COMMITTED, "tx-d": HoldState.ABORTED}
    core = [p for p in restarted.peaks() if p.link == "w1-core"]
    assert core and all(p.peak == 4 * G for p in core)


def test_a_prep_and_its_commit_in_one_batch_are_written_as_committed(
    topology: Path, tmp_path: Path
) -> None:
    service = _service(topology, tmp_path / "w1.db")
    outcomes = service.exchange([_prep("tx-a", 2), CommitCall("tx-a", TOKEN)])
    assert all(o.error is None for o in outcomes)
    service.store.close()
    restarted = _service(topology, tmp_path / "w1.db")
    (hold,) = restarted.status()
    assert hold.state is HoldState.COMMITTED and hold.allocations  # the whole row, not a state


# -- the orchestrator's side: coalescing ---------------------------------------------------


class FakeAgent:
    """An Exchange that answers every item with an Ack, and can be held or made to fail."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.release = threading.Event()
        self.release.set()
        self.failure: grpc.RpcError | None = None

    def __call__(self, request: pb.AgentBatch, timeout: float) -> pb.AgentBatchReply:
        self.release.wait(10)
        self.batches.append([item.commit.transaction_id for item in request.items])
        if self.failure is not None:
            raise self.failure
        reply = pb.AgentBatchReply()
        for item in request.items:
            reply.results.add().ack.transaction_id = item.commit.transaction_id
        return reply


class Unavailable(grpc.RpcError):  # type: ignore[misc]  # grpc ships no type hints
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "connection refused"


def _commit(tx: str) -> pb.AgentMessage:
    return pb.AgentMessage(commit=pb.Commit(transaction_id=tx, token=TOKEN))


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(4) as pool:
        yield pool


def test_messages_queued_behind_a_batch_in_flight_leave_together(
    executor: ThreadPoolExecutor,
) -> None:
    agent = FakeAgent()
    coalescer = Coalescer("w1", agent, executor, timeout=10)
    agent.release.clear()
    first = coalescer.submit(_commit("t0"))  # goes at once and is held at the agent
    later = [coalescer.submit(_commit(f"t{i}")) for i in range(1, 4)]
    agent.release.set()
    answers = [f.result(10).ack.transaction_id for f in [first, *later]]
    assert answers == ["t0", "t1", "t2", "t3"]
    assert agent.batches == [["t0"], ["t1", "t2", "t3"]]


def test_a_failed_batch_fails_each_of_its_messages_with_the_reason(
    executor: ThreadPoolExecutor,
) -> None:
    agent = FakeAgent()
    agent.failure = Unavailable()
    coalescer = Coalescer("w1", agent, executor, timeout=10)
    pending = [ItemPending("w1", coalescer.submit(_commit(f"t{i}")), lambda r: r) for i in range(3)]
    for p in pending:
        with pytest.raises(CallFailedError) as caught:
            p.result()
        assert caught.value.unreachable and caught.value.domain == "w1"


def test_an_item_error_is_that_message_s_failure_only() -> None:
    good: Any = pb.AgentResult(ack=pb.Ack(transaction_id="t1"))
    bad: Any = pb.AgentResult(
        error=pb.ItemError(code=pb.ERROR_CODE_CONFLICT, status="FAILED_PRECONDITION", message="no")
    )
    done: list[ItemPending[str]] = []
    for answer in (good, bad):
        future: Future[pb.AgentResult] = Future()
        future.set_result(answer)
        done.append(ItemPending("w1", future, lambda r: str(r.transaction_id)))
    assert done[0].result() == "t1"
    with pytest.raises(CallFailedError) as caught:
        done[1].result()
    assert (
        caught.value.error == "ERROR_CODE_CONFLICT" and caught.value.status == "FAILED_PRECONDITION"
    )


def test_a_message_that_waited_past_its_deadline_is_not_sent(executor: ThreadPoolExecutor) -> None:
    agent = FakeAgent()
    now = [0.0]
    coalescer = Coalescer("w1", agent, executor, timeout=1, clock=lambda: now[0])
    agent.release.clear()
    first = coalescer.submit(_commit("t0"))
    late = coalescer.submit(_commit("t1"))
    now[0] = 5.0  # t1's deadline (1.0) passes while t0's batch is in flight
    agent.release.set()
    assert first.result(10).ack.transaction_id == "t0"
    with pytest.raises(CallFailedError) as caught:
        late.result(10)
    assert caught.value.status == "DEADLINE_EXCEEDED"
    assert agent.batches == [["t0"]]


def test_a_batch_lingers_for_the_other_negotiations_in_progress(
    executor: ThreadPoolExecutor,
) -> None:
    agent = FakeAgent()
    coalescer = Coalescer("w1", agent, executor, timeout=10, linger=30.0, expected=lambda: 3)
    futures = [coalescer.submit(_commit(f"t{i}")) for i in range(3)]
    assert [f.result(10).ack.transaction_id for f in futures] == ["t0", "t1", "t2"]
    assert agent.batches == [["t0", "t1", "t2"]]  # one call, not one per negotiation


# -- the decision log: group commit --------------------------------------------------------


def test_concurrent_decisions_are_all_durable_with_fewer_syncs(tmp_path: Path) -> None:
    log = SqliteDecisionLog(tmp_path / "o.db")
    writers = 16

    def decide(i: int) -> None:
        tx = Transaction(f"tx{i}", f"r{i}", ("w1",), TOKEN)
        tx.record_vote("w1", TxVote(True))
        tx.decide()
        log.save(tx)

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(decide, range(writers)))
    assert log.syncs <= writers
    log.close()
    reopened = SqliteDecisionLog(tmp_path / "o.db")
    found = {tx.id: tx.decision for tx in reopened.unfinished()}
    assert len(found) == writers and all(d is not None for d in found.values())
    reopened.close()


# -- over real gRPC ------------------------------------------------------------------------


def _wire_prep(tx: str, gbps: int) -> pb.AgentMessage:
    now = int(time.time())
    return pb.AgentMessage(
        prep=pb.ReservationPrep(
            transaction_id=tx,
            token=TOKEN,
            window=pb.Window(start=now + 60, end=now + 600),
            segments=[pb.Segment(span=pb.Span(entry="w1-x", exit="w1-y"), bandwidth_bps=gbps * G)],
            hold_seconds=60,
        )
    )


@pytest.mark.slow
def test_exchange_over_grpc_answers_item_by_item(shared_cluster: LocalCluster) -> None:
    agent = shared_cluster.agent("w1")
    with pytest.raises(grpc.RpcError) as caught:
        agent.Exchange(pb.AgentBatch(), timeout=5)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    reply = agent.Exchange(
        pb.AgentBatch(items=[_wire_prep("bx-1", 3), pb.AgentMessage(), _wire_prep("bx-2", 30)]),
        timeout=5,
    )
    kinds = [r.WhichOneof("result") for r in reply.results]
    assert kinds == ["vote", "error", "vote"]
    assert reply.results[0].vote.yes and not reply.results[2].vote.yes
    assert reply.results[1].error.code == pb.ERROR_CODE_MALFORMED
    done = agent.Exchange(
        pb.AgentBatch(items=[pb.AgentMessage(abort=pb.Abort(transaction_id="bx-1", token=TOKEN))]),
        timeout=5,
    )
    assert done.results[0].ack.state == pb.HOLD_STATE_ABORTED
    assert_ledgers_agree(shared_cluster, [])


@pytest.mark.slow
def test_an_agent_that_dies_mid_batch_keeps_none_of_it_and_then_all_of_it(
    cluster: LocalCluster,
) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "exit-before-write"})
    batch = pb.AgentBatch(items=[_wire_prep("mid-1", 2), _wire_prep("mid-2", 3)])
    with pytest.raises(grpc.RpcError):
        cluster.agent("w1").Exchange(batch, timeout=5)
    assert cluster.wait_exit("w1") == 70
    cluster.start_agent("w1")
    assert states(cluster, "mid-1") == {} and states(cluster, "mid-2") == {}  # nothing half-kept
    reply = cluster.agent("w1").Exchange(batch, timeout=5)
    assert all(r.vote.yes for r in reply.results)
    cluster.kill("w1")  # a crash after the reply: both holds are on disk
    cluster.start_agent("w1")
    assert states(cluster, "mid-1") == {"w1": pb.HOLD_STATE_HELD}
    assert states(cluster, "mid-2") == {"w1": pb.HOLD_STATE_HELD}
    commits = pb.AgentBatch(
        items=[
            pb.AgentMessage(commit=pb.Commit(transaction_id=tx, token=TOKEN))
            for tx in ("mid-1", "mid-2")
        ]
    )
    assert all(r.ack.changed for r in cluster.agent("w1").Exchange(commits, timeout=5).results)
    extra = {tx: frozenset({"w1"}) for tx in ("mid-1", "mid-2")}
    assert_ledgers_agree(cluster, [], extra)
