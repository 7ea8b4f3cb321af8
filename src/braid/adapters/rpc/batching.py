"""Coalescing: the messages concurrent negotiations have for one agent go out as one call.

Each agent has a queue. A message put on it when no batch is in flight
leaves at once, alone (one negotiation at a time pays no waiting); messages
put on it while `depth` batches are in flight wait and leave together in
the next `Exchange` call (`AgentBatch`), so the fixed cost of a gRPC call —
a few hundred microseconds of CPU on each side — is paid once per batch
instead of once per message. Every message keeps its own deadline: one
that waited longer than its timeout fails with DEADLINE_EXCEEDED without
being sent, and a batch's call gets the longest time any of its messages
has left (so one message waits at most twice its timeout: behind one batch
in flight, then in its own).

Lingering: when more negotiations are under way than messages are queued
(`expected()`, the orchestrator's count of negotiations in progress), the
sender waits up to `linger` seconds for the others' messages, so that
negotiations running side by side go out in one batch per round instead of
trickling out in pairs. A lone negotiation never waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from typing import Any, Generic, TypeVar

import grpc

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.loop_waits import wait_all
from braid.app.negotiation.ports import CallFailedError

T = TypeVar("T")
MAX_BATCH = 256  # the agent's limit too (`agent_servicer.MAX_BATCH`)
# A queued message: what it says, when it must be answered by, who waits for the answer.
Entry = tuple[pb.AgentMessage, float, Future[pb.AgentResult]]


def failure(domain: str, exc: Any) -> CallFailedError:
    """A CallFailedError from a gRPC error, with the braid-error code when the agent sent one."""
    code = exc.code() if hasattr(exc, "code") else None
    trailing = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    error = dict(trailing or ()).get("braid-error", "")
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return CallFailedError(domain, code.name if code is not None else "UNKNOWN", error, details)


class Round:
    """The answers of calls sent together: waited for at once, so that the caller's
    thread wakes once for the round rather than once for each reply."""

    def __init__(self) -> None:
        self.futures: list[Future[pb.AgentResult]] = []
        self._settled = False

    def wait(self) -> None:
        if not self._settled:
            wait_all(self.futures)
            self._settled = True


class ItemPending(Generic[T]):
    """One message of a batch in flight; `result` waits for its own answer (for all of
    its `round`'s first)."""

    def __init__(
        self,
        domain: str,
        future: Future[pb.AgentResult],
        convert: Callable[[Any], T],
        round_: Round | None = None,
    ) -> None:
        self._domain = domain
        self._future = future
        self._convert = convert
        self._round = round_
        if round_ is not None:
            round_.futures.append(future)

    def result(self) -> T:
        if self._round is not None:
            self._round.wait()
        else:
            wait_all([self._future])
        answer = self._future.result()  # raises the batch's CallFailedError
        kind = answer.WhichOneof("result")
        if kind == "error":
            e = answer.error
            raise CallFailedError(self._domain, e.status, pb.ErrorCode.Name(e.code), e.message)
        if kind is None:
            raise CallFailedError(self._domain, "INTERNAL", "", "the agent sent an empty result")
        return self._convert(getattr(answer, kind))


class Coalescer:
    """The queue of one agent; batches are sent from `executor`'s threads."""

    def __init__(
        self,
        domain: str,
        exchange: Callable[..., pb.AgentBatchReply],
        executor: Executor,
        *,
        timeout: float,
        depth: int = 1,
        linger: float = 0.0,
        expected: Callable[[], int] = lambda: 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.domain = domain
        self._exchange = exchange
        self._executor = executor
        self._timeout = timeout
        self._depth = depth
        self._clock = clock
        self._queue: list[Entry] = []
        self._in_flight = 0
        self._linger = linger
        self._expected = expected
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)

    def submit(self, message: pb.AgentMessage) -> Future[pb.AgentResult]:
        future: Future[pb.AgentResult] = Future()
        self.put([(message, future)])
        return future

    def put(self, items: Sequence[tuple[pb.AgentMessage, Future[pb.AgentResult]]]) -> None:
        """Queue messages at once (each with the future of its answer): when no batch is
        in flight they leave in one."""
        with self._lock:
            deadline = self._clock() + self._timeout
            self._queue.extend((message, deadline, future) for message, future in items)
            self._arrived.notify()
            if self._in_flight >= self._depth:
                return  # a sender in flight takes them with its next batch
            self._in_flight += 1
        try:
            self._executor.submit(self._drain)
        except RuntimeError:  # the pool is shut down: nothing will send them
            with self._lock:
                self._in_flight -= 1
            fail(self._take_all(), self.domain, "UNAVAILABLE", "the orchestrator is closing")

    def _take_all(self) -> list[Entry]:
        with self._lock:
            taken, self._queue = self._queue, []
        return taken

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._in_flight -= 1
                    return
                self._wait_for_company()
                batch = self._queue[:MAX_BATCH]
                del self._queue[:MAX_BATCH]
            try:
                self._send(batch)
            except Exception as exc:
                fail(batch, self.domain, "INTERNAL", str(exc))

    def _wait_for_company(self) -> None:
        """Linger (lock held) while other negotiations may still add to this batch."""
        if self._linger <= 0:
            return
        until = self._clock() + self._linger
        while len(self._queue) < min(self._expected(), MAX_BATCH):
            left = until - self._clock()
            if left <= 0:
                return
            self._arrived.wait(left)

    def _send(self, batch: list[Entry]) -> None:
        now = self._clock()
        batch = in_time(batch, now, self.domain)
        if not batch:
            return
        request = pb.AgentBatch(items=[message for message, _, _ in batch])
        # The freshest message's time: an older one must not fail a fresh one early.
        left = max(deadline for _, deadline, _ in batch) - now
        try:
            reply = self._exchange(request, timeout=left)
        except grpc.RpcError as exc:
            error = failure(self.domain, exc)
            for _, _, future in batch:
                future.set_exception(error)
            return
        answer(batch, reply, self.domain)


def in_time(batch: list[Entry], now: float, domain: str) -> list[Entry]:
    """The messages of `batch` still within their deadline; the others fail unsent."""
    fail(
        [e for e in batch if e[1] <= now],
        domain,
        "DEADLINE_EXCEEDED",
        "waited past its deadline; not sent",
    )
    return [e for e in batch if e[1] > now]


def answer(batch: list[Entry], reply: pb.AgentBatchReply, domain: str) -> None:
    """Each message's result, in order (all fail if the reply does not match the batch)."""
    if len(reply.results) != len(batch):
        fail(batch, domain, "INTERNAL", "the agent's reply does not match the batch")
        return
    for (_, _, future), result in zip(batch, reply.results, strict=True):
        if not future.done():
            future.set_result(result)


def fail(entries: list[Entry], domain: str, status: str, message: str) -> None:
    reject(entries, CallFailedError(domain, status, "", message))


def reject(entries: list[Entry], error: CallFailedError) -> None:
    """Each message still unanswered fails with `error`."""
    for _, _, future in entries:
        if not future.done():
            future.set_exception(error)
