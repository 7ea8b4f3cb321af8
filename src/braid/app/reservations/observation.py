"""What `/metrics` shows of a running service, taken at scrape time.

One snapshot: each link direction's booked share now and its peak over the
next hour, the live reservations by state, the holds and how soon the first
expires, and how far this replica's view may lag behind the store.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Final

from braid.app.ports import Filters
from braid.app.reservations.books import Books
from braid.core.planning.lifecycle import State, state_at

__all__ = ["LinkLoad", "Observation", "observe"]

HORIZON: Final = 3600  # the "coming hour" of the peak gauge
LIVE: Final = frozenset({State.HELD, State.RESERVED, State.ACTIVE})
_LIVE_LIMIT: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class LinkLoad:
    link: str
    direction: str
    now: float  # booked share of capacity
    peak_next_hour: float


@dataclass(frozen=True, slots=True)
class Observation:
    links: tuple[LinkLoad, ...]
    reservations: dict[str, int]  # live ones, by state as the clock sees them
    holds: int
    next_hold_expiry: float | None  # seconds from now, None without holds
    seconds_since_read: float  # since this replica last read the store's changes
    changes_behind: int  # store changes this replica has not applied yet (other replicas')


def observe(books: Books) -> Observation:
    now = books.clock()
    live = books.mirror
    found = books.store.find(Filters(states=LIVE, start=now, limit=_LIVE_LIMIT))
    seen = [(state_at(r.state, r.start, r.end, now, r.hold_expires_at), r) for r in found]
    states = Counter(state for state, _ in seen)
    expiries = [
        r.hold_expires_at - now
        for state, r in seen
        if state == State.HELD and r.hold_expires_at is not None
    ]
    return Observation(
        links=_link_loads(books, now),
        reservations={s.value: states.get(s, 0) for s in sorted(LIVE, key=lambda s: s.value)},
        holds=len(expiries),
        next_hold_expiry=float(min(expiries)) if expiries else None,
        seconds_since_read=max(0.0, time.monotonic() - live.last_read),
        changes_behind=live.unapplied(),
    )


def _link_loads(books: Books, now: int) -> tuple[LinkLoad, ...]:
    return tuple(
        LinkLoad(
            link,
            "a-b" if forward else "b-a",
            timeline.level_at(now) / timeline.capacity,
            timeline.max_booked(now, now + HORIZON) / timeline.capacity,
        )
        for (link, forward), timeline in books.mirror.network.timelines().items()
    )
