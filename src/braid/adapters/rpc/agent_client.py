"""The orchestrator's gRPC clients of the domain agents (implements app.negotiation.ports)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, Generic, TypeVar

import grpc

from braid.adapters.rpc.batch_stream import StreamCoalescer, StreamLoop
from braid.adapters.rpc.batching import Coalescer, ItemPending, Round, failure
from braid.adapters.rpc.channels import TlsFiles, bearer, open_aio_channel, open_channel
from braid.adapters.rpc.switch_plans import plan_to_pb
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.agent.messages import OffersCall, PrepCall, SpanOffer
from braid.app.loop_waits import wait_all
from braid.app.negotiation.defaults import BATCH_LINGER, CALL_TIMEOUT
from braid.app.negotiation.ports import CallFailedError, PrepReply, Replaced
from braid.core.negotiation.result_rules import SwitchPlan

T = TypeVar("T")
_PLANS_KEPT = 4096
# A call of a `together` block: the coalescer it goes to, the message, its answer's future.
_Held = tuple["Coalescer | StreamCoalescer", pb.AgentMessage, Future[Any]]
# The batch item that carries each single call's request.
_ITEM_OF = {
    "RequestOffers": "offers",
    "Prepare": "prep",
    "CommitHold": "commit",
    "AbortHold": "abort",
    "ReleaseHold": "release",
}


class GrpcPending(Generic[T]):
    def __init__(self, domain: str, future: Future[Any], convert: Callable[[Any], T]) -> None:
        self._domain = domain
        self._future = future
        self._convert = convert

    def result(self) -> T:
        wait_all([self._future])
        try:
            reply = self._future.result()
        except grpc.RpcError as exc:
            raise failure(self._domain, exc) from None
        return self._convert(reply)


class _Settled(Generic[T]):
    """A call already made (sequential fan-out): its reply or its error."""

    def __init__(self, domain: str, call: Callable[[], Any], convert: Callable[[Any], T]) -> None:
        self._domain = domain
        self._convert = convert
        self._error: CallFailedError | None = None
        try:
            self._reply = call()
        except grpc.RpcError as exc:
            self._error = failure(domain, exc)

    def result(self) -> T:
        if self._error is not None:
            raise self._error
        return self._convert(self._reply)


class _Failed(Generic[T]):
    def __init__(self, error: CallFailedError) -> None:
        self._error = error

    def result(self) -> T:
        raise self._error


class GrpcAgentPool:
    """One channel per domain agent; every call has a deadline.

    `parallel`: the calls of one round go out together from a pool of
    threads making blocking calls (cheaper per call than the asyncio API,
    and much cheaper than the synchronous `future()`, which starts a thread
    per call); a slow agent then delays a round by at most one timeout.
    Without it each call is made in turn in the caller's thread: the least
    CPU per call, which wins on a machine with few cores, but a round may
    take up to one timeout per unresponsive agent.

    `batch` (with `parallel`): messages go through one `Coalescer` per agent,
    so concurrent negotiations share `Exchange` calls (`batch_depth` of them
    in flight per agent at most, each waiting up to `linger` seconds for the
    messages of other negotiations in progress); a lone negotiation's
    message leaves at once. With `stream` (the default) each agent's batches
    go over one long-lived `ExchangeStream`, all driven from one event loop
    (`StreamCoalescer`), instead of one `Exchange` call each.
    """

    def __init__(
        self,
        addresses: Mapping[str, str],
        *,
        timeout: float = CALL_TIMEOUT,
        tls: TlsFiles | None = None,
        workers: int = 16,
        parallel: bool = True,
        batch: bool = True,
        batch_depth: int = 1,
        linger: float = BATCH_LINGER,
        stream: bool = True,
        token: str | None = None,
    ) -> None:
        self.timeout = timeout
        self._token = token  # a bearer token for agents' peer policies
        # This orchestrator's address for decision questions (Orchestrator.Decide),
        # sent with every Prep; set once its server listens.
        self.coordinator = ""
        self.parallel = parallel
        self._tls = tls
        self._batching = (batch_depth, linger) if batch and parallel else None
        self._streams = StreamLoop() if stream and self._batching is not None else None
        self._addresses: dict[str, str] = {}
        self._channels: dict[str, Any] = {}
        self._retired: list[Any] = []  # channels of agents that moved, closed at the end
        self._stubs: dict[str, Any] = {}
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="braid-agent-call")
        self.coalescers: dict[str, Coalescer | StreamCoalescer] = {}
        self._held = threading.local()  # the calls of a `together` block, per thread
        # Negotiations under way that may call each domain (`negotiating`).
        self._negotiations: dict[str, int] = {}
        self._counting = threading.Lock()
        self._plans_pb: dict[SwitchPlan, pb.SwitchPlan] = {}
        self._retired_coalescers: list[StreamCoalescer] = []
        for domain, address in addresses.items():
            self.connect(domain, address)

    def connect(self, domain: str, address: str) -> None:
        """Call `domain`'s agent at `address` from now on (a new domain, or one that moved)."""
        if self._addresses.get(domain) == address:
            return
        channel = open_channel(address, tls=self._tls, token=self._token)
        stub = pb_grpc.DomainAgentStub(channel)
        if self._batching is not None:
            self._coalesce(domain, address, stub)
        if domain in self._channels:  # calls under way on it finish; it closes with the pool
            self._retired.append(self._channels[domain])
        self._addresses[domain], self._channels[domain], self._stubs[domain] = (
            address,
            channel,
            stub,
        )

    def _coalesce(self, domain: str, address: str, stub: Any) -> None:
        assert self._batching is not None
        depth, linger = self._batching
        expected = partial(self._negotiating_with, domain)
        old = self.coalescers.get(domain)
        if isinstance(old, StreamCoalescer):
            self._retired_coalescers.append(old)
        if self._streams is None:
            self.coalescers[domain] = Coalescer(
                domain,
                partial(stub.Exchange, wait_for_ready=True),
                self._pool,
                timeout=self.timeout,
                depth=depth,
                linger=linger,
                expected=expected,
            )
            return
        self.coalescers[domain] = StreamCoalescer(
            domain,
            AgentStream(address, self._tls, self._token),
            self._streams,
            timeout=self.timeout,
            depth=depth,
            linger=linger,
            expected=expected,
        )

    @property
    def streams_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the agents' streams run on (None without streams)."""
        return None if self._streams is None else self._streams.loop

    def _negotiating_with(self, domain: str) -> int:
        return self._negotiations.get(domain, 0)

    def close(self) -> None:
        if self._streams is not None:
            streams = [c for c in self.coalescers.values() if isinstance(c, StreamCoalescer)]
            for coalescer in [*streams, *self._retired_coalescers]:
                self._streams.run(coalescer.close())
            self._streams.close()
        self._pool.shutdown(wait=True)
        for channel in [*self._channels.values(), *self._retired]:
            channel.close()

    def _call(self, domain: str, method: str, request: Any, convert: Callable[[Any], T]) -> Any:
        stub = self._stubs.get(domain)
        if stub is None:
            return _Failed[T](CallFailedError(domain, "UNAVAILABLE", "", "no agent address"))
        coalescer = self.coalescers.get(domain)
        if coalescer is not None:
            message = pb.AgentMessage(**{_ITEM_OF[method]: request})
            held: list[_Held] | None = getattr(self._held, "calls", None)
            if held is None:
                return ItemPending(domain, coalescer.submit(message), convert)
            future: Future[pb.AgentResult] = Future()
            held.append((coalescer, message, future))
            return ItemPending(domain, future, convert, self._held.round)
        # Like a stream, a call waits for the connection within its deadline: an agent
        # that has just restarted is reached, not refused while the channel backs off.
        call = partial(getattr(stub, method), request, timeout=self.timeout, wait_for_ready=True)
        if not self.parallel:
            return _Settled(domain, call, convert)
        return GrpcPending(domain, self._pool.submit(call), convert)

    @contextlib.contextmanager
    def negotiating(self, domains: Collection[str]) -> Iterator[None]:
        """Count a negotiation under way at each of `domains`: a batch to one of them
        lingers (up to `linger`) for the next rounds of the negotiations counted there."""
        mine = tuple(domains)
        with self._counting:
            for domain in mine:
                self._negotiations[domain] = self._negotiations.get(domain, 0) + 1
        try:
            yield
        finally:
            with self._counting:
                for domain in mine:
                    self._negotiations[domain] -= 1

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """Batched calls made inside are handed to their coalescers when it ends, all at
        once: each agent's leave in one batch, and the streams' loop wakes once."""
        if getattr(self._held, "calls", None) is not None:
            yield  # the outer block hands them over
            return
        held: list[_Held] = []
        round_ = self._held.round = Round()
        self._held.calls = held
        try:
            yield
        finally:
            self._held.calls = self._held.round = None
            self._hand_over(held, round_)

    def _hand_over(self, held: list[_Held], round_: Round) -> None:
        streamed = [(c, c.entry(m, f)) for c, m, f in held if isinstance(c, StreamCoalescer)]
        if streamed and self._streams is not None:
            self._streams.hand_over(streamed, round_)
        unary: dict[int, tuple[Coalescer, list[tuple[pb.AgentMessage, Future[Any]]]]] = {}
        for c, m, f in held:
            if isinstance(c, Coalescer):
                unary.setdefault(id(c), (c, []))[1].append((m, f))
        for coalescer, items in unary.values():
            coalescer.put(items)

    def offers(self, domain: str, call: OffersCall) -> Any:
        request = pb.ReqOffers(
            transaction_id=call.transaction,
            token=call.token,
            window=pb.Window(start=call.window[0], end=call.window[1]),
            spans=[pb.Span(entry=a, exit=b) for a, b in call.spans],
            directional=not call.symmetric,
            replaces=_replaces(call.replaces),
            over_time=call.over_time,
            replaces_all=_all_replaced(call.replaces, call.also_replaces),
        )
        if not call.over_time:
            return self._call(domain, "RequestOffers", request, _offer_values)
        window = call.window
        return self._call(domain, "RequestOffers", request, lambda r: _timed_offers(r, window))

    def prepare(self, domain: str, call: PrepCall) -> Any:
        request = pb.ReservationPrep(
            transaction_id=call.transaction,
            token=call.token,
            window=pb.Window(start=call.window[0], end=call.window[1]),
            segments=[
                pb.Segment(
                    span=pb.Span(entry=s.entry, exit=s.exit),
                    bandwidth_bps=s.bandwidth,
                    path_index=s.path_index,
                )
                for s in call.segments
            ],
            hold_seconds=call.hold_seconds,
            directional=not call.symmetric,
            coordinator=self.coordinator,
            replaces=_replaces(call.replaces),
            replaces_all=_all_replaced(call.replaces, call.also_replaces),
        )
        return self._call(domain, "Prepare", request, _prep_reply)

    def commit(
        self, domain: str, transaction: str, token: str, switches: Sequence[SwitchPlan] = ()
    ) -> Any:
        request = pb.Commit(
            transaction_id=transaction, token=token, switches=[self._plan_pb(p) for p in switches]
        )
        return self._call(domain, "CommitHold", request, lambda r: pb.HoldState.Name(r.state))

    def _plan_pb(self, plan: SwitchPlan) -> pb.SwitchPlan:
        """`plan` as protobuf, kept: reservations between the same sites over the same
        VLANs share their plans, and every Commit carries them."""
        known = self._plans_pb.get(plan)
        if known is None:
            if len(self._plans_pb) >= _PLANS_KEPT:
                self._plans_pb.clear()
            known = self._plans_pb[plan] = plan_to_pb(plan)
        return known

    def abort(self, domain: str, transaction: str, token: str) -> Any:
        request = pb.Abort(transaction_id=transaction, token=token)
        return self._call(domain, "AbortHold", request, lambda r: pb.HoldState.Name(r.state))

    def release(self, domain: str, transaction: str, token: str) -> Any:
        request = pb.Release(transaction_id=transaction, token=token)
        return self._call(domain, "ReleaseHold", request, lambda r: pb.HoldState.Name(r.state))


class AgentStream:
    """Opens an agent's `ExchangeStream` on an asyncio channel made on first use (in the
    streams' loop, where it must live); the bearer token goes with each stream."""

    def __init__(self, address: str, tls: TlsFiles | None, token: str | None) -> None:
        self._address = address
        self._tls = tls
        self._metadata = bearer(token)
        self._channel: Any = None
        self._stub: Any = None

    def __call__(self) -> Any:
        if self._stub is None:
            self._channel = open_aio_channel(self._address, tls=self._tls)
            self._stub = pb_grpc.DomainAgentStub(self._channel)
        # Waits for the connection instead of failing at once while the channel backs
        # off after a failure (an agent that restarted is reached as soon as it is up);
        # each batch's deadline still bounds the wait.
        return self._stub.ExchangeStream(metadata=self._metadata, wait_for_ready=True)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()


def _replaces(replaces: Replaced | None) -> pb.Replaces | None:
    return None if replaces is None else _one_replaced(replaces)


def _all_replaced(first: Replaced | None, also: Sequence[Replaced]) -> list[pb.Replaces]:
    """Every old version, the first included (an agent that reads only `replaces` gets it)."""
    if not also:
        return []
    return [_one_replaced(r) for r in dict.fromkeys((*([first] if first else []), *also))]


def _one_replaced(replaces: Replaced) -> pb.Replaces:
    return pb.Replaces(transaction_id=replaces[0], token=replaces[1])


def _prep_reply(reply: Any) -> PrepReply:
    return PrepReply(
        yes=reply.yes,
        reason=reply.reason,
        expires_at=reply.hold_expires_at,
        vlans=tuple((v.link, v.vlan, v.path_index) for v in reply.vlans),
    )


def _offer_values(reply: pb.SendOffers) -> list[int]:
    return [o.bandwidth_bps for o in reply.offers]


def _timed_offers(reply: pb.SendOffers, window: tuple[int, int]) -> list[SpanOffer]:
    """Each span's offer over time (an agent from before over_time sends no steps: its
    whole-window value then stands for the whole window)."""
    return [
        SpanOffer(
            o.bandwidth_bps,
            tuple((s.start, s.end, s.bandwidth_bps) for s in o.steps)
            or ((*window, o.bandwidth_bps),),
        )
        for o in reply.offers
    ]
