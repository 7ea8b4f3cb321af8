"""Pending changes to a network's bookings, planned on the side and applied at once.

An allocation that preempts sub-paths touches several bookings. Planning it
on the live network would leave it half-changed if anything failed midway,
so every change is first recorded here: the draft answers "how much is free"
as if its changes were made, checks each change against that answer, and
only `apply` touches the network.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from types import MappingProxyType

from braid.core.model.booking import Booking
from braid.core.model.intervals import Span
from braid.core.model.network import Direction, Network
from braid.core.model.timeline import OverbookingError
from braid.core.model.topology import Hop

Usable = Callable[[Hop], int]


class Draft:
    """A network plus changed bookings (None = removed), not yet applied."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self._changed: dict[str, Booking | None] = {}
        # Per link direction, the net change of booked bit/s over each window;
        # summing per window keeps a release-then-rebook pair from piling up.
        self._deltas: dict[Direction, dict[Span, int]] = {}

    @property
    def changes(self) -> Mapping[str, Booking | None]:
        return MappingProxyType(self._changed)

    def booking(self, booking_id: str) -> Booking | None:
        if booking_id in self._changed:
            return self._changed[booking_id]
        return self.network.bookings.get(booking_id)

    def put(self, booking_id: str, booking: Booking | None) -> None:
        """Replace (or remove, with None) a booking; refuses to overbook."""
        old = self.booking(booking_id)
        if old is not None:
            self._shift(old, -1)
        if booking is not None:
            self._shift(booking, +1)
            short = None if _within(booking, old) else self._short(booking)
            if short is not None:
                # Undo first so the draft stays usable; a caller asking for
                # more than `usable` allowed is a bug, not a user error.
                self._shift(booking, -1)
                if old is not None:
                    self._shift(old, +1)
                raise OverbookingError(f"draft: link {short} lacks room for {booking_id}")
        self._changed[booking_id] = booking

    def free(self, key: Direction, start: int, end: int) -> int:
        """Free bit/s on one link direction throughout [start, end), changes included."""
        timeline = self.network.timeline(*key)
        deltas = [
            (a, b, d) for (a, b), d in self._deltas.get(key, {}).items() if a < end and start < b
        ]
        if not deltas:
            return timeline.free(start, end)
        # The level only changes at the timeline's breakpoints and the deltas'
        # edges, so its peak over the window is reached at one of them.
        points = {start, *timeline.breakpoints(start, end)}
        points.update(x for a, b, _ in deltas for x in (a, b) if start < x < end)
        peak = max(
            timeline.level_at(p) + sum(d for a, b, d in deltas if a <= p < b) for p in points
        )
        return timeline.capacity - peak

    def usable(self, start: int, end: int, symmetric: bool) -> Usable:
        """Like `Network.window(...).usable`, as the draft stands now.

        The answers are cached, so take a fresh one after every `put`.
        """
        cache: dict[Direction, int] = {}

        def usable(hop: Hop) -> int:
            key = (hop.link, hop.forward)
            if key not in cache:
                free = self.free(key, start, end)
                if symmetric:
                    free = min(free, self.free((hop.link, not hop.forward), start, end))
                cache[key] = free
            return cache[key]

        return usable

    def apply(self) -> None:
        """Make every change on the network, or none.

        `put` has already checked that the final state fits, and it is reached
        by releasing first and committing after, so every intermediate state
        is below the final one and no commit can be refused. The rollback is a
        guard against bugs elsewhere: the network is never left half-changed.
        """
        network = self.network
        released: list[Booking] = []
        committed: list[str] = []
        try:
            for booking_id in self._changed:
                if booking_id in network.bookings:
                    released.append(network.release(booking_id))
            for booking_id, booking in self._changed.items():
                if booking is not None:
                    network.commit(booking)
                    committed.append(booking_id)
        except Exception:
            for booking_id in reversed(committed):
                network.release(booking_id)
            for booking in released:
                network.commit(booking)
            raise

    def _shift(self, booking: Booking, sign: int) -> None:
        span = (booking.start, booking.end)
        for key, load in self.network.loads(booking).items():
            per_window = self._deltas.setdefault(key, {})
            total = per_window.get(span, 0) + sign * load
            if total:
                per_window[span] = total
            else:
                per_window.pop(span, None)

    def _short(self, booking: Booking) -> Direction | None:
        for key in self.network.loads(booking):
            if self.free(key, booking.start, booking.end) < 0:
                return key
        return None


def _within(new: Booking, old: Booking | None) -> bool:
    """True when `new` only drops allocations of `old`, so cannot overbook."""
    if old is None or (new.start, new.end, new.symmetric) != (old.start, old.end, old.symmetric):
        return False
    return not Counter(new.allocations) - Counter(old.allocations)
