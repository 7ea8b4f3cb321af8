"""One domain's agent: offers, holds, bookings — the service behind `braid agent`.

The gRPC servicer is a thin translation of this class; every check of a
message happens here, before anything changes, and every change is written
to the agent's store before the answer leaves.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from braid.adapters.domain_files import MultiDomainFile
from braid.app.agent_store import AgentStore
from braid.core.errors import InputError
from braid.core.negotiation.holds import (
    BadTokenError,
    Hold,
    HoldBook,
    HoldState,
    PrepRefused,
    SegmentAsk,
    StateConflictError,
    UnknownTransactionError,
)
from braid.core.network import Network
from braid.core.units import FOREVER

_TRANSACTION_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
MAX_SPANS = 16
_T = TypeVar("_T")


class AgentError(InputError):
    """A message the agent rejects; `code` is the proto ErrorCode suffix."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(field, message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Vote:
    yes: bool
    hold: Hold | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class LinkPeak:
    link: str
    forward: bool
    capacity: int
    peak: int


class AgentService:
    """The holds and bookings of one domain, guarded by one lock."""

    def __init__(
        self,
        domains: MultiDomainFile,
        domain: str,
        store: AgentStore,
        *,
        max_hold_seconds: int = 300,
        past_grace_seconds: int = 5,
        clock: Callable[[], float] = time.time,
    ) -> None:
        spec = domains.view.require_domain(domain, "--domain")
        self.domain = domain
        self.kind = spec.kind
        self.visible = spec.visible
        topology = domains.domain_topology(domain)
        vlans = {
            link.id: link.vlans for link in domains.view.links.values() if link.owner == domain
        }
        self.book = HoldBook(Network(topology), vlans)
        self.points = frozenset(topology.nodes)
        self.ceiling = sum(link.capacity for link in topology.links.values())
        self.store = store
        self.max_hold = max_hold_seconds
        self.grace = past_grace_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self.book.restore(store.load())
        self._next_expiry = self._earliest_expiry()

    def now(self) -> int:
        return int(self.clock())

    # -- the protocol ----------------------------------------------------------

    def offers(
        self,
        transaction: str,
        token: str,
        window: tuple[int, int],
        spans: Sequence[tuple[str, str]],
        symmetric: bool,
    ) -> list[int]:
        if not self.visible:
            raise AgentError("BLIND_DOMAIN", "", f"domain {self.domain} gives no offers (blind)")
        self._check_ids(transaction, token)
        start, end = self._check_window(window)
        self._check_spans(spans)
        with self._lock:
            self._sweep_due()
            return [self.book.offer(a, b, start, end, symmetric) for a, b in spans]

    def prepare(
        self,
        transaction: str,
        token: str,
        window: tuple[int, int],
        segments: Sequence[SegmentAsk],
        hold_seconds: int,
        symmetric: bool,
    ) -> Vote:
        self._check_ids(transaction, token)
        start, end = self._check_window(window)
        self._check_spans([(s.entry, s.exit) for s in segments])
        if not segments:
            raise AgentError("MALFORMED", "segments", "a Prep needs at least one segment")
        for i, s in enumerate(segments):
            if not 0 < s.bandwidth <= self.ceiling:
                raise AgentError(
                    "BANDWIDTH_TOO_LARGE" if s.bandwidth else "MALFORMED",
                    f"segments[{i}].bandwidth_bps",
                    f"must be between 1 and {self.ceiling} bit/s here, got {s.bandwidth}",
                )
        lifetime = min(hold_seconds or self.max_hold, self.max_hold)
        with self._lock:
            now = self._sweep_due()
            try:
                hold = self._guard(
                    lambda: self.book.prepare(
                        transaction, token, segments, start, end, now + lifetime, symmetric
                    )
                )
            except PrepRefused as exc:
                return Vote(False, None, str(exc))
            self.store.save(hold)
            self._next_expiry = min(self._next_expiry, hold.expires_at)
            return Vote(True, hold)

    def commit(self, transaction: str, token: str) -> tuple[Hold, bool]:
        self._check_ids(transaction, token)
        with self._lock:
            self._sweep_due()
            hold, changed = self._guard(lambda: self.book.commit(transaction, token))
            if changed:
                self.store.save(hold)
            return hold, changed

    def abort(self, transaction: str, token: str) -> tuple[Hold, bool]:
        self._check_ids(transaction, token)
        with self._lock:
            self._sweep_due()
            hold, changed = self._guard(lambda: self.book.abort(transaction, token))
            if changed:
                self.store.save(hold)
            return hold, changed

    def status(self, transaction: str = "") -> list[Hold]:
        with self._lock:
            self._sweep_due()
            if not transaction:
                return list(self.book.holds.values())
            hold = self.book.holds.get(transaction)
            if hold is None:
                raise AgentError(
                    "UNKNOWN_TRANSACTION", "transaction_id", f"unknown transaction {transaction!r}"
                )
            return [hold]

    def peaks(self) -> list[LinkPeak]:
        """The highest level ever booked on each link direction, for leak and overbooking checks."""
        with self._lock:
            topology = self.book.network.topology
            return [
                LinkPeak(link, forward, topology.links[link].capacity, t.max_booked(0, FOREVER))
                for (link, forward), t in self.book.network.timelines().items()
            ]

    def sweep(self) -> list[Hold]:
        """Free expired holds now (a background timer calls this)."""
        with self._lock:
            return self._sweep(self.now())

    # -- inside ------------------------------------------------------------------

    def _sweep_due(self) -> int:
        now = self.now()
        if now >= self._next_expiry:
            self._sweep(now)
        return now

    def _sweep(self, now: int) -> list[Hold]:
        expired = self.book.expire(now)
        if expired:
            self.store.save(*expired)
        self._next_expiry = self._earliest_expiry()
        return expired

    def _earliest_expiry(self) -> int:
        held = [h.expires_at for h in self.book.holds.values() if h.state is HoldState.HELD]
        return min(held, default=FOREVER)

    @staticmethod
    def _guard(action: Callable[[], _T]) -> _T:
        try:
            return action()
        except UnknownTransactionError as exc:
            raise AgentError("UNKNOWN_TRANSACTION", exc.field, exc.message) from exc
        except BadTokenError as exc:
            raise AgentError("BAD_TOKEN", exc.field, exc.message) from exc
        except StateConflictError as exc:
            raise AgentError("CONFLICT", exc.field, exc.message) from exc

    def _check_ids(self, transaction: str, token: str) -> None:
        if not _TRANSACTION_ID.match(transaction):
            raise AgentError("MALFORMED", "transaction_id", "must be 1-64 of A-Z a-z 0-9 . _ : -")
        if not _TOKEN.match(token):
            raise AgentError("BAD_TOKEN", "token", "must be 16-128 of A-Z a-z 0-9 _ -")

    def _check_window(self, window: tuple[int, int]) -> tuple[int, int]:
        start, end = window
        if end <= start:
            raise AgentError("MALFORMED", "window.end", f"must be after start ({start}), got {end}")
        if end > FOREVER:
            raise AgentError("MALFORMED", "window.end", "too far in the future")
        now = self.now()
        if start < now - self.grace:
            raise AgentError(
                "WINDOW_IN_PAST", "window.start", f"{start} is in the past (now {now})"
            )
        return start, end

    def _check_spans(self, spans: Sequence[tuple[str, str]]) -> None:
        if len(spans) > MAX_SPANS:
            raise AgentError("MALFORMED", "spans", f"at most {MAX_SPANS} per message")
        for i, (entry, exit) in enumerate(spans):
            for name, point in (("entry", entry), ("exit", exit)):
                if point not in self.points:
                    raise AgentError(
                        "UNKNOWN_POINT",
                        f"spans[{i}].{name}",
                        f"domain {self.domain} has no point {point!r}",
                    )
