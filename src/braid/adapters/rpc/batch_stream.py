"""Coalescing over streams: each agent's batches go over one long-lived `ExchangeStream`.

The unary `Coalescer` pays, per batch, a gRPC call's set-up on both sides
(a new HTTP/2 stream; on the agent, a hand-off to a pool thread) and, on
the orchestrator, a thread that blocks on the call. Here every agent has
one stream, opened on first use, and every stream of the orchestrator is
driven from one asyncio event loop in one thread (`StreamLoop`): a round's
messages to six agents are six writes from that thread, and their replies
wake the negotiation once each. On this transport a round of calls to six
agents takes about half the wall time and half the agents' CPU
(docs/multidomain.md, "Batching").

What the caller sees is the `Coalescer`'s contract: `submit` returns a
future for the item's `AgentResult`; a message leaves at once when no batch
to that agent is in flight, messages arriving meanwhile leave together in
the next batch (lingering up to `linger` for the messages of negotiations
in progress); every message keeps its own deadline. The agent answers the
batches of a stream in the order they were sent, so each reply belongs to
the oldest batch in flight. A stream that breaks (the agent restarted; a
rejected batch ends it with its status) fails the batches in flight on it
with that status and the next batch opens a new stream; a batch not
answered by its deadline fails with DEADLINE_EXCEEDED and its stream is
cancelled, so that a late reply is never taken for another batch's.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
import uvloop

from braid.adapters.rpc.batching import (
    MAX_BATCH,
    Entry,
    answer,
    fail,
    failure,
    in_time,
    reject,
)
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.negotiation.ports import CallFailedError


class OpenStream(Protocol):
    """Opens the agent's ExchangeStream (in the loop's thread): the call to write to and
    read from; `close` closes what the streams were opened on."""

    def __call__(self) -> Any: ...

    async def close(self) -> None: ...


class StreamLoop:
    """The thread and event loop every stream of one agent pool runs on."""

    def __init__(self) -> None:
        # uvloop: less of the loop's own work per message than asyncio's default loop.
        self.loop = uvloop.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="braid-agent-streams", daemon=True
        )
        self._thread.start()

    def hand_over(self, entries: Sequence[tuple[StreamCoalescer, Entry]], round_: object) -> None:
        """Queue each entry on its coalescer with one wake of the loop for them all (one
        negotiation's `round_`: its messages to each agent then leave in one batch)."""
        if threading.get_ident() == self._thread.ident:  # a negotiation on the loop itself
            self._add_all(entries, round_)
            return
        try:
            self.loop.call_soon_threadsafe(self._add_all, entries, round_)
        except RuntimeError:  # the loop is closed: nothing will send them
            for coalescer, entry in entries:
                fail([entry], coalescer.domain, "UNAVAILABLE", "the orchestrator is closing")

    def _add_all(self, entries: Sequence[tuple[StreamCoalescer, Entry]], round_: object) -> None:
        touched: dict[int, StreamCoalescer] = {}
        for coalescer, entry in entries:
            if coalescer.enqueue(entry, round_):
                touched[id(coalescer)] = coalescer
        for coalescer in touched.values():
            coalescer.pump()

    def run(self, coroutine: Any, timeout: float = 10.0) -> Any:
        """Run `coroutine` on the loop and wait for it (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop once its tasks (the streams' readers) are over."""
        if self.loop.is_closed():
            return
        # Closed already, or a task would not end: stop the loop all the same.
        with contextlib.suppress(RuntimeError, TimeoutError):
            self.run(_settle())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()


def _settle_future(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _settle() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class _Stream:
    call: Any
    in_flight: deque[tuple[list[Entry], asyncio.TimerHandle]] = field(default_factory=deque)
    writing: asyncio.Task[Any] | None = None  # the sender while it writes
    admitted: bool = False  # the agent has sent its initial metadata
    over: bool = False


class StreamCoalescer:
    """The queue of one agent; its batches go over the agent's stream.

    Everything but `submit` and `close` runs in the loop's thread, so the
    queue and the streams need no lock.
    """

    def __init__(
        self,
        domain: str,
        open_stream: OpenStream,
        loop: StreamLoop,
        *,
        timeout: float,
        depth: int = 1,
        linger: float = 0.0,
        expected: Callable[[], int] = lambda: 0,
    ) -> None:
        self.domain = domain
        self._open_stream = open_stream
        self._streams = loop
        self._loop = loop.loop
        self._timeout = timeout
        self._depth = depth
        self._linger = linger
        self._expected = expected
        self._queue: list[Entry] = []
        # The negotiation round each queued entry belongs to, and how many of them
        # each round has queued: a batch lingers for the rounds, not the messages.
        self._rounds: list[object] = []
        self._queued_rounds: dict[object, int] = {}
        self._stream: _Stream | None = None
        self._sending = False
        self._arrived: asyncio.Future[None] | None = None
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, message: pb.AgentMessage) -> Future[pb.AgentResult]:
        future: Future[pb.AgentResult] = Future()
        self._streams.hand_over([(self, self.entry(message, future))], future)
        return future

    def entry(self, message: pb.AgentMessage, future: Future[pb.AgentResult]) -> Entry:
        """`message` with its deadline, for `StreamLoop.hand_over` (any thread)."""
        return (message, self._loop.time() + self._timeout, future)

    async def close(self) -> None:
        """Fail what waits and cancel the stream (on the loop)."""
        self._closed = True
        queued, self._queue = self._queue, []
        self._rounds, self._queued_rounds = [], {}
        fail(queued, self.domain, "UNAVAILABLE", "the orchestrator is closing")
        if self._stream is not None:
            self._end(self._stream, StreamError(grpc.StatusCode.UNAVAILABLE, "closing"))
        await self._open_stream.close()

    # -- on the loop -----------------------------------------------------------------

    def enqueue(self, entry: Entry, round_: object) -> bool:
        """Queue `entry` of negotiation round `round_` (on the loop); False if closed (it
        failed). `pump` sends."""
        if self._closed:
            fail([entry], self.domain, "UNAVAILABLE", "the orchestrator is closing")
            return False
        self._queue.append(entry)
        self._rounds.append(round_)
        self._queued_rounds[round_] = self._queued_rounds.get(round_, 0) + 1
        if self._arrived is not None:
            _settle_future(self._arrived)
        return True

    def pump(self) -> None:
        """Start a sender if a batch may leave now."""
        busy = self._stream is not None and len(self._stream.in_flight) >= self._depth
        if self._sending or busy or not self._queue or self._closed:
            return
        self._sending = True
        self._spawn(self._send())

    def _spawn(self, coroutine: Any) -> None:
        # The loop keeps only weak references to its tasks: hold them until they end.
        task = self._loop.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self) -> None:
        try:
            await self._wait_for_company()
            batch = self._take()
            if batch:
                await self._write(batch)
        finally:
            self._sending = False
        self.pump()

    async def _wait_for_company(self) -> None:
        """Linger while fewer negotiations have a round queued here than are in progress
        (`expected()`): the others' next rounds may join this batch. For `linger`
        seconds at most; a negotiation alone never waits."""
        if self._linger <= 0:
            return
        until = self._loop.time() + self._linger
        while len(self._queued_rounds) < min(self._expected(), MAX_BATCH):
            if self._loop.time() >= until:
                return
            # A bare future and a timer: this runs for every batch, and `wait_for` on
            # an Event would make a task of its own each time.
            arrived = self._arrived = self._loop.create_future()
            timer = self._loop.call_at(until, _settle_future, arrived)
            try:
                await arrived
            finally:
                timer.cancel()
                self._arrived = None

    def _take(self) -> list[Entry]:
        """The next batch, without the messages already past their deadline."""
        batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
        rounds, self._rounds = self._rounds[:MAX_BATCH], self._rounds[MAX_BATCH:]
        counts = self._queued_rounds
        for round_ in rounds:
            left = counts[round_] - 1
            if left:
                counts[round_] = left
            else:
                del counts[round_]
        return in_time(batch, self._loop.time(), self.domain)

    async def _write(self, batch: list[Entry]) -> None:
        if self._closed:
            fail(batch, self.domain, "UNAVAILABLE", "the orchestrator is closing")
            return
        try:
            stream = self._stream or self._open()
        except Exception as exc:  # e.g. credentials gRPC refuses: no batch is left waiting
            fail(batch, self.domain, "UNAVAILABLE", f"cannot open a stream: {exc}")
            return
        # The freshest message's deadline: an older one must not fail a fresh one early.
        deadline = max(entry[1] for entry in batch)
        timer = self._loop.call_at(deadline, self._expire, stream, batch)
        stream.in_flight.append((batch, timer))
        request = pb.AgentBatch(items=[message for message, _, _ in batch])
        # Ending the stream cancels this task while it writes: gRPC would keep a write
        # still waiting for the connection waiting for good on a cancelled call.
        stream.writing = asyncio.current_task()
        try:
            if not stream.admitted:
                # The agent's first word says whether it admits this caller; a refusal
                # ends the call, and the reader fails the batch with its reason.
                await stream.call.initial_metadata()
                if stream.call.done():
                    stream.writing = None
                    return
                stream.admitted = True
            await stream.call.write(request)
        except asyncio.CancelledError:
            stream.writing = None
            if not stream.over:  # not the stream's end: the loop is closing
                raise
        except Exception as exc:
            stream.writing = None
            if not stream.over:
                self._end(stream, _as_rpc_error(exc))
        stream.writing = None

    def _open(self) -> _Stream:
        stream = _Stream(self._open_stream())
        self._stream = stream
        self._spawn(self._read(stream))
        return stream

    async def _read(self, stream: _Stream) -> None:
        error: Any
        try:
            while True:
                reply = await stream.call.read()
                if reply is grpc.aio.EOF:
                    error = StreamError(grpc.StatusCode.UNAVAILABLE, "the agent ended the stream")
                    break
                if not stream.in_flight:
                    error = StreamError(
                        grpc.StatusCode.INTERNAL, "the agent sent a reply to no batch"
                    )
                    break
                batch, timer = stream.in_flight.popleft()
                timer.cancel()
                answer(batch, reply, self.domain)
                self.pump()
        except grpc.RpcError as exc:
            error = exc
        except asyncio.CancelledError:
            error = StreamError(grpc.StatusCode.CANCELLED, "the stream was cancelled")
        self._end(stream, error)

    def _expire(self, stream: _Stream, batch: list[Entry]) -> None:
        """A batch unanswered at its deadline: fail it and drop its stream."""
        fail(batch, self.domain, "DEADLINE_EXCEEDED", "Deadline Exceeded")
        self._end(stream, StreamError(grpc.StatusCode.CANCELLED, "a batch before it timed out"))

    def _end(self, stream: _Stream, error: Any) -> None:
        """The stream is over: fail its batches in flight with `error`, cancel it."""
        if stream.over:
            return
        stream.over = True
        if self._stream is stream:
            self._stream = None
        failed = _broken(failure(self.domain, error), error)
        while stream.in_flight:
            batch, timer = stream.in_flight.popleft()
            timer.cancel()
            reject(batch, failed)
        if stream.writing is not None:
            stream.writing.cancel()
        stream.call.cancel()
        self.pump()  # what is queued goes on a new stream


class StreamError(grpc.RpcError):  # type: ignore[misc]  # grpc is untyped
    """A stream's failure that no agent reported, shaped like a call's error."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()


def _broken(failed: CallFailedError, error: Any) -> CallFailedError:
    """gRPC's own INTERNAL on a stream (no agent sends one) as the broken stream it means.

    A message written as the connection drops or the agent ends the stream
    fails in gRPC's core, and the call then reports INTERNAL ("Internal error
    from Core") instead of what ended it; nothing of that write reached the agent.
    """
    if failed.status != "INTERNAL" or failed.error or isinstance(error, StreamError):
        return failed
    return CallFailedError(failed.domain, "UNAVAILABLE", "", f"the stream broke ({failed.message})")


def _as_rpc_error(exc: BaseException) -> Any:
    if isinstance(exc, grpc.RpcError):
        return exc
    return StreamError(grpc.StatusCode.UNAVAILABLE, str(exc) or type(exc).__name__)
