"""The network's bookings over time: one timeline per link direction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from braid.core.loads import Direction, direction_loads

__all__ = ["Allocation", "Booking", "Direction", "Network", "WindowView"]
from braid.core.paths import Path
from braid.core.timeline import OverbookingError, Timeline
from braid.core.topology import Hop, Topology


@dataclass(frozen=True, slots=True)
class Allocation:
    path: Path
    bandwidth: int


@dataclass(frozen=True, slots=True)
class Booking:
    """Bandwidth booked on one or more paths for [start, end)."""

    id: str
    start: int
    end: int
    allocations: tuple[Allocation, ...]
    symmetric: bool = True

    @property
    def bandwidth(self) -> int:
        return sum(a.bandwidth for a in self.allocations)


class Network:
    """A topology plus everything booked on it."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self._timelines: dict[Direction, Timeline] = {}
        for link in topology.links.values():
            self._timelines[(link.id, True)] = Timeline(link.capacity)
            self._timelines[(link.id, False)] = Timeline(link.capacity)
        self.bookings: dict[str, Booking] = {}
        # Links carrying a one-way booking; on every other link both
        # directions hold the same levels, so reading one of them is enough.
        self.one_way: Counter[str] = Counter()

    def timeline(self, link: str, forward: bool) -> Timeline:
        return self._timelines[(link, forward)]

    def timelines(self) -> Mapping[Direction, Timeline]:
        return self._timelines

    def loads(self, booking: Booking) -> dict[Direction, int]:
        """What `booking` puts on each link direction (paths may share links)."""
        return direction_loads(booking, self.topology)

    def shortfall(self, booking: Booking) -> list[tuple[Direction, int]]:
        """Link directions that lack room for `booking`, with how much is missing."""
        short = []
        for key, load in self.loads(booking).items():
            free = self._timelines[key].free(booking.start, booking.end)
            if load > free:
                short.append((key, load - free))
        return short

    def commit(self, booking: Booking) -> None:
        """Book all of `booking` or nothing."""
        if booking.id in self.bookings:
            raise ValueError(f"booking {booking.id!r} exists already")
        short = self.shortfall(booking)
        if short:
            (link, _), missing = short[0]
            raise OverbookingError(f"link {link} lacks {missing} bit/s for booking {booking.id}")
        for key, load in self.loads(booking).items():
            self._timelines[key].book(booking.start, booking.end, load)
        self.bookings[booking.id] = booking
        if not booking.symmetric:
            self.one_way.update(self._links_of(booking))

    def release(self, booking_id: str) -> Booking:
        booking = self.bookings.pop(booking_id)
        for key, load in self.loads(booking).items():
            self._timelines[key].release(booking.start, booking.end, load)
        if not booking.symmetric:
            self.one_way.subtract(self._links_of(booking))
        return booking

    @staticmethod
    def _links_of(booking: Booking) -> set[str]:
        return {link for a in booking.allocations for link in a.path.links}

    def window(self, start: int, end: int, *, symmetric: bool = True) -> WindowView:
        return WindowView(self, start, end, symmetric)

    def last_change(self, before: int) -> int | None:
        """The last instant before `before` at which any booked level changes."""
        ends = (t.last_breakpoint(before) for t in self._timelines.values())
        return max((e for e in ends if e is not None), default=None)

    def breakpoints(self, start: int, end: int) -> list[int]:
        """Every instant in [start, end) at which some link's booked level changes."""
        instants: set[int] = set()
        for timeline in self._timelines.values():
            instants.update(timeline.breakpoints(start, end))
        return sorted(instants)


class WindowView:
    """Free capacity of every hop throughout one window, computed once per link."""

    __slots__ = ("_cache", "end", "network", "start", "symmetric")

    def __init__(self, network: Network, start: int, end: int, symmetric: bool) -> None:
        self.network = network
        self.start = start
        self.end = end
        self.symmetric = symmetric
        self._cache: dict[Direction, int] = {}

    @property
    def topology(self) -> Topology:
        return self.network.topology

    def usable(self, hop: Hop) -> int:
        """Bandwidth a new booking can take crossing `hop` throughout the window."""
        network = self.network
        if self.symmetric and not network.one_way[hop.link]:
            # Both directions hold the same levels: one lookup serves both.
            key = (hop.link, True)
            cached = self._cache.get(key)
            if cached is None:
                cached = network.timeline(hop.link, True).free(self.start, self.end)
                self._cache[key] = cached
            return cached
        key = (hop.link, hop.forward)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        free = network.timeline(hop.link, hop.forward).free(self.start, self.end)
        if self.symmetric:
            back = network.timeline(hop.link, not hop.forward).free(self.start, self.end)
            free = min(free, back)
        self._cache[key] = free
        return free
