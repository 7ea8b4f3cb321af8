"""Batches over one ExchangeStream per agent: order, failures, deadlines, a new stream after
each failure; and every transport reaching an agent that has just restarted; against a
scripted agent served over real gRPC on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import grpc
import pytest

from braid.adapters.rpc.agent_client import AgentStream, GrpcAgentPool
from braid.adapters.rpc.batch_stream import StreamCoalescer, StreamLoop
from braid.adapters.rpc.batching import ItemPending
from braid.adapters.rpc.channels import start_server
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.negotiation.ports import CallFailedError
from tests.integration.negotiation.conftest import TOKEN


class ScriptedAgent:
    """Acks every Commit of a batch; holds a batch while `release` is clear; ends the stream
    with CONFLICT on a batch with a transaction named "reject"; answers "late" a second late."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.streams = 0
        self.tokens: list[str] = []
        self.release = threading.Event()
        self.release.set()
        self.arrived = threading.Event()

    def exchange_stream(
        self, requests: Iterator[pb.AgentBatch], context: Any
    ) -> Iterator[pb.AgentBatchReply]:
        self.streams += 1
        self.tokens += [v for k, v in context.invocation_metadata() if k == "authorization"]
        context.send_initial_metadata(())  # admitted, as an agent says it
        for request in requests:
            yield self.exchange(request, context)

    def exchange(self, request: pb.AgentBatch, context: Any) -> pb.AgentBatchReply:
        self.arrived.set()
        self.release.wait(10)
        ids = [item.commit.transaction_id for item in request.items]
        self.batches.append(ids)
        if "reject" in ids:
            context.set_trailing_metadata((("braid-error", "ERROR_CODE_CONFLICT"),))
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "rejected on purpose")
        if "late" in ids:
            time.sleep(1.0)
        reply = pb.AgentBatchReply()
        for tx in ids:
            reply.results.add().ack.CopyFrom(_ack(tx))
        return reply

    def commit_hold(self, request: pb.Commit, context: Any) -> pb.Ack:
        return _ack(request.transaction_id)


def _ack(tx: str) -> pb.Ack:
    return pb.Ack(transaction_id=tx, state=pb.HoldState.Value("HOLD_STATE_COMMITTED"))


def _serve(agent: ScriptedAgent, address: str) -> tuple[Any, int]:
    """A DomainAgent server with only the calls a Commit takes over each transport."""
    handler = grpc.method_handlers_generic_handler(
        "braid.v1.DomainAgent",
        {
            "ExchangeStream": grpc.stream_stream_rpc_method_handler(
                agent.exchange_stream,
                request_deserializer=pb.AgentBatch.FromString,
                response_serializer=pb.AgentBatchReply.SerializeToString,
            ),
            "Exchange": grpc.unary_unary_rpc_method_handler(
                agent.exchange,
                request_deserializer=pb.AgentBatch.FromString,
                response_serializer=pb.AgentBatchReply.SerializeToString,
            ),
            "CommitHold": grpc.unary_unary_rpc_method_handler(
                agent.commit_hold,
                request_deserializer=pb.Commit.FromString,
                response_serializer=pb.Ack.SerializeToString,
            ),
        },
    )
    return start_server(
        [(lambda _, server: server.add_generic_rpc_handlers((handler,)), None)], address, workers=4
    )


def _serve_stream(
    exchange_stream: Callable[[Iterator[pb.AgentBatch], Any], Iterator[pb.AgentBatchReply]],
) -> tuple[Any, int]:
    """A DomainAgent server whose ExchangeStream is `exchange_stream`, and nothing else."""
    handler = grpc.method_handlers_generic_handler(
        "braid.v1.DomainAgent",
        {
            "ExchangeStream": grpc.stream_stream_rpc_method_handler(
                exchange_stream,
                request_deserializer=pb.AgentBatch.FromString,
                response_serializer=pb.AgentBatchReply.SerializeToString,
            )
        },
    )
    return start_server(
        [(lambda _, s: s.add_generic_rpc_handlers((handler,)), None)], "127.0.0.1:0", workers=4
    )


@pytest.fixture
def agent() -> Iterator[tuple[ScriptedAgent, int]]:
    scripted = ScriptedAgent()
    server, port = _serve(scripted, "127.0.0.1:0")
    yield scripted, port
    server.stop(0)


@pytest.fixture
def loop() -> Iterator[StreamLoop]:
    streams = StreamLoop()
    yield streams
    streams.close()


def _coalescer(
    port: int, loop: StreamLoop, timeout: float = 10.0, **options: Any
) -> StreamCoalescer:
    opener = AgentStream(f"127.0.0.1:{port}", None, "a-token-of-sixteen-chars")
    return StreamCoalescer("w1", opener, loop, timeout=timeout, **options)


def _commit(tx: str) -> pb.AgentMessage:
    return pb.AgentMessage(commit=pb.Commit(transaction_id=tx, token=TOKEN))


def _acked(coalescer: StreamCoalescer, tx: str) -> str:
    return str(coalescer.submit(_commit(tx)).result(10).ack.transaction_id)


def _failure(coalescer: StreamCoalescer, tx: str) -> CallFailedError:
    pending = ItemPending("w1", coalescer.submit(_commit(tx)), lambda r: r)
    with pytest.raises(CallFailedError) as caught:
        pending.result()
    return caught.value


def test_batches_share_one_stream_and_messages_queued_behind_one_leave_together(
    agent: tuple[ScriptedAgent, int], loop: StreamLoop
) -> None:
    scripted, port = agent
    coalescer = _coalescer(port, loop)
    scripted.release.clear()
    first = coalescer.submit(_commit("t0"))  # leaves at once, held at the agent
    assert scripted.arrived.wait(10)
    later = [coalescer.submit(_commit(f"t{i}")) for i in range(1, 4)]
    scripted.release.set()
    answers = [f.result(10).ack.transaction_id for f in [first, *later]]
    assert answers == ["t0", "t1", "t2", "t3"]
    assert scripted.batches == [["t0"], ["t1", "t2", "t3"]]
    assert _acked(coalescer, "t4") == "t4"
    assert scripted.streams == 1
    assert scripted.tokens == ["Bearer a-token-of-sixteen-chars"]
    loop.run(coalescer.close())


def test_a_batch_the_agent_rejects_fails_with_its_code_and_the_next_goes_on_a_new_stream(
    agent: tuple[ScriptedAgent, int], loop: StreamLoop
) -> None:
    scripted, port = agent
    coalescer = _coalescer(port, loop)
    error = _failure(coalescer, "reject")
    assert (error.status, error.error) == ("FAILED_PRECONDITION", "ERROR_CODE_CONFLICT")
    assert "rejected on purpose" in error.message
    assert _acked(coalescer, "t1") == "t1"
    assert scripted.streams == 2
    loop.run(coalescer.close())


def test_an_unanswered_batch_times_out_and_its_late_reply_is_never_taken_for_another(
    agent: tuple[ScriptedAgent, int], loop: StreamLoop
) -> None:
    scripted, port = agent
    coalescer = _coalescer(port, loop, timeout=0.5)
    assert _failure(coalescer, "late").status == "DEADLINE_EXCEEDED"
    assert _acked(coalescer, "t1") == "t1"  # its own answer (a fresh stream), not late's
    assert scripted.streams == 2
    loop.run(coalescer.close())


def test_an_agent_that_is_down_fails_the_batch_and_is_reached_as_soon_as_it_is_up(
    loop: StreamLoop,
) -> None:
    scripted = ScriptedAgent()
    server, port = _serve(scripted, "127.0.0.1:0")
    coalescer = _coalescer(port, loop, timeout=3.0)
    assert _acked(coalescer, "t0") == "t0"
    server.stop(0).wait()
    assert _failure(coalescer, "t1").unreachable  # the channel is backing off by now
    again, _ = _serve(scripted, f"127.0.0.1:{port}")
    try:
        # No failure while the channel backs off (at most 1 s): the stream waits for
        # the connection, within the message's deadline.
        assert _acked(coalescer, "t2") == "t2"
    finally:
        loop.run(coalescer.close())
        again.stop(0)


def test_a_batch_lingers_for_the_other_negotiations_in_progress(
    agent: tuple[ScriptedAgent, int], loop: StreamLoop
) -> None:
    scripted, port = agent
    coalescer = _coalescer(port, loop, linger=30.0, expected=lambda: 3)
    futures = [coalescer.submit(_commit(f"t{i}")) for i in range(3)]
    assert [f.result(10).ack.transaction_id for f in futures] == ["t0", "t1", "t2"]
    assert scripted.batches == [["t0", "t1", "t2"]]  # one batch, not one per negotiation
    loop.run(coalescer.close())


def test_a_batch_lingers_for_negotiations_not_for_messages(
    agent: tuple[ScriptedAgent, int], loop: StreamLoop
) -> None:
    """Two negotiations in progress; the first hands over two messages at once (offers and
    a Prep): the batch waits for the second negotiation, not for a second message."""
    scripted, port = agent
    coalescer = _coalescer(port, loop, linger=30.0, expected=lambda: 2)
    one, same = Future[pb.AgentResult](), Future[pb.AgentResult]()
    loop.hand_over(
        [(coalescer, coalescer.entry(_commit(t), f)) for t, f in (("t0", one), ("t1", same))], one
    )
    assert not scripted.arrived.wait(0.3)  # both messages of one round: it lingers
    other = coalescer.submit(_commit("t2"))
    assert [f.result(10).ack.transaction_id for f in (one, same, other)] == ["t0", "t1", "t2"]
    assert scripted.batches == [["t0", "t1", "t2"]]
    loop.run(coalescer.close())


def test_closing_fails_what_is_queued_and_refuses_what_comes_after(
    agent: tuple[ScriptedAgent, int], loop: StreamLoop
) -> None:
    scripted, port = agent
    coalescer = _coalescer(port, loop)
    scripted.release.clear()
    held = coalescer.submit(_commit("t0"))
    assert scripted.arrived.wait(10)
    queued = coalescer.submit(_commit("t1"))
    loop.run(coalescer.close())
    scripted.release.set()
    for future in (held, queued):
        with pytest.raises(CallFailedError) as caught:
            future.result(10)
        assert caught.value.status == "UNAVAILABLE"
    assert _failure(coalescer, "t2").status == "UNAVAILABLE"


@pytest.mark.parametrize(
    "transport",
    [
        {},  # the default: batches over a stream
        {"stream": False},  # one Exchange call per batch
        {"batch": False},  # one call per message
        {"batch": False, "parallel": False},  # one call per message, in turn
    ],
    ids=["stream", "exchange", "unbatched", "sequential"],
)
def test_every_transport_reaches_an_agent_that_has_just_restarted(transport: Any) -> None:
    scripted = ScriptedAgent()
    server, port = _serve(scripted, "127.0.0.1:0")
    pool = GrpcAgentPool({"w1": f"127.0.0.1:{port}"}, timeout=2.0, **transport)
    try:
        assert pool.commit("w1", "t0", TOKEN).result() == "HOLD_STATE_COMMITTED"
        server.stop(0).wait()
        with pytest.raises(CallFailedError):  # the channel then backs off (1 s, then 1.6 s)
            pool.commit("w1", "t1", TOKEN).result()
        server, _ = _serve(scripted, f"127.0.0.1:{port}")
        assert pool.commit("w1", "t2", TOKEN).result() == "HOLD_STATE_COMMITTED"
    finally:
        pool.close()
        server.stop(0)


def test_a_refused_stream_always_fails_with_the_agent_s_reason(loop: StreamLoop) -> None:
    # A write racing the refusal made gRPC report INTERNAL instead, once in about 20 tries:
    # the batch must wait for the agent's first word, and never be written to a refusal.
    def refuse(requests: Iterator[pb.AgentBatch], context: Any) -> Iterator[pb.AgentBatchReply]:
        context.set_trailing_metadata((("braid-error", "ERROR_CODE_POLICY"),))
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "no policy peers entry names you")
        yield pb.AgentBatchReply()  # never reached: a generator, as a stream's handler is

    server, port = _serve_stream(refuse)
    coalescer = _coalescer(port, loop)
    try:
        seen = {(e.status, e.error) for e in (_failure(coalescer, f"t{i}") for i in range(200))}
        assert seen == {("UNAUTHENTICATED", "ERROR_CODE_POLICY")}
    finally:
        loop.run(coalescer.close())
        server.stop(0)


def test_a_batch_written_as_its_stream_ends_fails_as_unreachable_never_internal(
    loop: StreamLoop,
) -> None:
    # The agent ends each stream after one batch, so many batches are written as their
    # stream ends; gRPC's core fails such a write and reports INTERNAL for the call.
    def one_batch(requests: Iterator[pb.AgentBatch], context: Any) -> Iterator[pb.AgentBatchReply]:
        context.send_initial_metadata(())
        for request in requests:
            reply = pb.AgentBatchReply()
            for item in request.items:
                reply.results.add().ack.CopyFrom(_ack(item.commit.transaction_id))
            yield reply
            return

    server, port = _serve_stream(one_batch)
    coalescer = _coalescer(port, loop)
    outcomes: list[str] = []
    try:
        for i in range(300):
            pending = ItemPending("w1", coalescer.submit(_commit(f"t{i}")), lambda r: r)
            try:
                outcomes.append("acked" if pending.result().transaction_id else "empty")
            except CallFailedError as failed:
                outcomes.append("unreachable" if failed.unreachable else failed.status)
    finally:
        loop.run(coalescer.close())
        server.stop(0)
    assert set(outcomes) == {"acked", "unreachable"}
