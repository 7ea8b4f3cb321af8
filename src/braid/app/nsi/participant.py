"""braid as an NSI requester: an NSI provider's domain takes part in the two-phase commit.

`NsiParticipants` is the orchestrator's `AgentPool` for the domains of kind
`nsi`. Such a domain is blind: it gives no offers and answers a concrete
request yes or no. Its vote is NSI's reserve — each segment asked of it
becomes one NSI connection, and the vote is yes once every one of them is
ReserveHeld. COMMIT is reserveCommit then provision (committed in braid means
carried in the window), ABORT is reserveAbort followed by
terminate (an aborted NSI reservation still exists, Created, and braid wants
nothing left behind), a cancel's RELEASE is terminate.

The provider acknowledges each request at once and does the work after it;
braid learns the outcome with querySummarySync rather than at a replyTo
endpoint of its own: the orchestrator then needs no inbound HTTP port, and
the same query is what recovery needs anyway (after a restart nobody is
waiting at any replyTo).

Every connection id is written to the `ConnectionBook` as soon as the
provider gives it, before the vote leaves, so a restarted orchestrator that
presumes abort (or re-sends a commit) knows what to end or commit. Each
connection also carries a global reservation id made from the transaction
id: were the orchestrator killed between the provider's answer and the
write, recovery finds the connection by it.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from braid.app.agent.messages import OffersCall, PrepCall
from braid.app.loop_waits import wait_all
from braid.app.negotiation.ports import CallFailedError, PrepReply, Window
from braid.app.nsi.messages import Criteria, Summary
from braid.app.nsi.ports import ConnectionBook, NsiProvider, ProviderError
from braid.core.errors import TopologyError
from braid.core.negotiation.holds import SegmentAsk
from braid.core.negotiation.result_rules import SwitchPlan
from braid.core.nsi.peer import BorderEnd, NsiPeer, segment_stps, vlan_of
from braid.core.nsi.states import LifecycleState, ProvisionState, ReservationState

__all__ = ["NsiParticipants", "global_id"]

T = TypeVar("T")
_GLOBAL_IDS = uuid.UUID("5f0c8d52-4a55-4c0e-9a39-6b1d6a3e2b11")  # braid's namespace for them
# Reservation states still on their way somewhere: wait for them to settle.
_BUSY = frozenset(
    {ReservationState.CHECKING, ReservationState.COMMITTING, ReservationState.ABORTING}
)
_GONE = frozenset({LifecycleState.TERMINATED})


def global_id(transaction: str, domain: str) -> str:
    """The global reservation id braid gives `transaction`'s connections in `domain`."""
    return f"urn:uuid:{uuid.uuid5(_GLOBAL_IDS, f'{transaction}/{domain}')}"


class _Call(Generic[T]):
    """A request in flight on the participants' threads (the `Pending` of the port)."""

    def __init__(self, future: Future[T]) -> None:
        self._future = future

    def result(self) -> T:
        wait_all([self._future])
        return self._future.result()


class _Done(Generic[T]):
    def __init__(self, error: CallFailedError) -> None:
        self._error = error

    def result(self) -> T:
        raise self._error


class NsiParticipants:
    """The `AgentPool` of the NSI domains (`peers`, with their border links `ends`)."""

    def __init__(
        self,
        peers: Mapping[str, NsiPeer],
        ends: Mapping[str, Sequence[BorderEnd]],
        provider: NsiProvider,
        book: ConnectionBook,
        *,
        poll: float = 0.05,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.peers = dict(peers)
        self._ends = {d: tuple(e) for d, e in ends.items()}
        self._provider = provider
        self._book = book
        self._poll = poll
        self._sleep = sleep
        self._threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="nsi-requester")
        # Transactions told to end while their reserve may still be under way (see prepare).
        self._ended: set[str] = set()
        self._lock = threading.Lock()

    def close(self) -> None:
        self._threads.shutdown(wait=True)

    # -- the AgentPool port ---------------------------------------------------------

    def together(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()  # each request is a SOAP exchange of its own

    def negotiating(self, domains: Collection[str]) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()  # nothing is batched

    def offers(self, domain: str, call: OffersCall) -> _Done[list[int]]:
        why = "an NSI domain answers only a concrete reserve"
        return _Done(CallFailedError(domain, "FAILED_PRECONDITION", "ERROR_CODE_BLIND_DOMAIN", why))

    def prepare(self, domain: str, call: PrepCall) -> _Call[PrepReply]:
        # A new connection each version: nothing is shared with what `call.replaces`.
        work, segments = self._prepare, call.segments
        return _Call(self._threads.submit(work, domain, call.transaction, call.window, segments))

    def commit(
        self, domain: str, transaction: str, token: str, switches: Sequence[SwitchPlan] = ()
    ) -> _Call[str]:
        return _Call(self._threads.submit(self._commit, domain, transaction))

    def abort(self, domain: str, transaction: str, token: str) -> _Call[str]:
        return _Call(self._threads.submit(self._end, domain, transaction, "HOLD_STATE_ABORTED"))

    def release(self, domain: str, transaction: str, token: str) -> _Call[str]:
        return _Call(self._threads.submit(self._end, domain, transaction, "HOLD_STATE_RELEASED"))

    # -- the vote -------------------------------------------------------------------

    def _prepare(
        self, domain: str, tx: str, window: Window, segments: tuple[SegmentAsk, ...]
    ) -> PrepReply:
        peer = self.peers[domain]
        made: list[str] = []
        try:
            links = []
            for segment in segments:
                stps = segment_stps(
                    peer, self._ends[domain], segment.entry, segment.exit, segment.bandwidth
                )
                criteria = Criteria(
                    1, window[0], window[1], stps.capacity_mbps, stps.source, stps.dest
                )
                made.append(self._provider.reserve(peer, global_id(tx, domain), criteria))
                links.append((stps.source_link, stps.dest_link, segment.path_index))
                with self._lock:
                    self._book.add(tx, domain, made[-1])
                    if tx in self._ended:  # aborted meanwhile: its abort may have missed this one
                        raise ProviderError("the transaction ended while reserving", reached=True)
            held = self._settled(domain, made)
        except (ProviderError, TopologyError, CallFailedError) as exc:
            self._end_quietly(domain, made)
            return PrepReply(False, f"NSI {peer.nsa}: {_text(exc)}")
        refused = [s for s in held if s.states.reservation is not ReservationState.HELD]
        if refused:
            self._end_quietly(domain, made)
            first = refused[0]
            return PrepReply(False, f"NSI {peer.nsa}: {first.connection_id} {_states(first)}")
        return PrepReply(True, vlans=_vlans(held, links))

    # -- the decision ---------------------------------------------------------------

    def _commit(self, domain: str, tx: str) -> str:
        ids = self._known(domain, tx)
        if not ids:
            raise CallFailedError(
                domain, "NOT_FOUND", "ERROR_CODE_UNKNOWN_TRANSACTION", f"no NSI connection for {tx}"
            )
        for summary in self._settled(domain, ids):
            if summary.states.reservation is ReservationState.HELD:
                self._ask(domain, "reserveCommit", summary.connection_id)
        for summary in self._settled(domain, ids):
            live = summary.states.lifecycle is LifecycleState.CREATED
            if summary.states.reservation is not ReservationState.START or not live:
                why = f"{summary.connection_id} cannot be committed: {_states(summary)}"
                raise CallFailedError(domain, "FAILED_PRECONDITION", "ERROR_CODE_CONFLICT", why)
            # Committed in braid means carried in its window; in NSI that also takes a
            # provision (the provider then switches the data plane on at the start).
            if summary.states.provision in (None, ProvisionState.RELEASED):
                self._ask(domain, "provision", summary.connection_id)
        self._settled(domain, ids, until=lambda s: s.states.provision is ProvisionState.PROVISIONED)
        return "HOLD_STATE_COMMITTED"

    def _end(self, domain: str, tx: str, answer: str) -> str:
        """Abort (if held) and terminate every connection of `tx`: nothing is left there."""
        with self._lock:
            self._ended.add(tx)
        self._end_all(domain, self._known(domain, tx))
        return answer

    def _end_all(self, domain: str, ids: Sequence[str]) -> None:
        for summary in self._settled(domain, ids):
            if summary.states.reservation is ReservationState.HELD:
                self._ask(domain, "reserveAbort", summary.connection_id)
        for summary in self._settled(domain, ids):
            if summary.states.lifecycle not in (LifecycleState.TERMINATING, *_GONE):
                self._ask(domain, "terminate", summary.connection_id)
        self._settled(domain, ids, until=lambda s: s.states.lifecycle in _GONE)

    def _end_quietly(self, domain: str, ids: Sequence[str]) -> None:
        """After a no vote: end what was made; what fails here the orchestrator's abort redoes."""
        with contextlib.suppress(CallFailedError):
            self._end_all(domain, ids)

    # -- talking to the provider ----------------------------------------------------

    def _known(self, domain: str, tx: str) -> list[str]:
        """The connections of `tx`: from the book, else found by their global reservation id
        (the orchestrator died before it could write one down)."""
        ids = self._book.connections(tx, domain)
        if ids:
            return ids
        wanted = global_id(tx, domain)
        try:
            everything = self._provider.summaries(self.peers[domain])
        except ProviderError as exc:
            raise _failure(domain, exc) from None
        found = [s.connection_id for s in everything if s.global_reservation_id == wanted]
        for connection_id in found:
            self._book.add(tx, domain, connection_id)
        return found

    def _ask(self, domain: str, operation: str, connection_id: str) -> None:
        try:
            self._provider.request(self.peers[domain], operation, connection_id)
        except ProviderError as exc:
            raise _failure(domain, exc) from None

    def _settled(
        self,
        domain: str,
        ids: Sequence[str],
        until: Callable[[Summary], bool] | None = None,
    ) -> list[Summary]:
        """The connections' summaries once none is on its way (or `until` holds for all);
        DEADLINE_EXCEEDED after the peer's timeout."""
        if not ids:
            return []
        done = until or (lambda s: s.states.reservation not in _BUSY)
        peer = self.peers[domain]
        deadline = time.monotonic() + peer.timeout
        wait = self._poll
        while True:
            try:
                found = {s.connection_id: s for s in self._provider.summaries(peer, ids)}
            except ProviderError as exc:
                raise _failure(domain, exc) from None
            missing = [i for i in ids if i not in found]
            if missing:  # it holds nothing for it: settles an abort, refuses a commit
                text = f"the provider does not know connection {missing[0]}"
                raise CallFailedError(domain, "NOT_FOUND", "ERROR_CODE_UNKNOWN_TRANSACTION", text)
            summaries = [found[i] for i in ids]
            if all(done(s) for s in summaries):
                return summaries
            if time.monotonic() > deadline:
                states = "; ".join(f"{s.connection_id} {_states(s)}" for s in summaries)
                raise CallFailedError(domain, "DEADLINE_EXCEEDED", "", f"still {states}")
            self._sleep(wait)
            wait = min(wait * 1.5, 1.0)


def _vlans(
    held: Sequence[Summary], links: Sequence[tuple[str, str, int]]
) -> tuple[tuple[str, int, int], ...]:
    """The VLANs the provider chose on the border links it owns, by path."""
    out = []
    for summary, (source_link, dest_link, path) in zip(held, links, strict=True):
        for link, stp in (
            (source_link, summary.criteria.source_stp),
            (dest_link, summary.criteria.dest_stp),
        ):
            vlan = vlan_of(stp)
            if vlan is not None:
                out.append((link, vlan, path))
    return tuple(out)


def _states(summary: Summary) -> str:
    states = summary.states
    return f"({states.reservation.value}, {states.lifecycle.value})"


def _text(exc: Exception) -> str:
    if isinstance(exc, ProviderError):
        return f"{exc.error_id} {exc.text}".strip()
    if isinstance(exc, CallFailedError):
        return exc.message
    return str(exc)


def _failure(domain: str, exc: ProviderError) -> CallFailedError:
    """Not reached: retried later; refused: also retried (the state may have moved on)."""
    status = "UNAVAILABLE" if not exc.reached else "FAILED_PRECONDITION"
    return CallFailedError(domain, status, f"NSI {exc.error_id}".strip(), exc.text)
