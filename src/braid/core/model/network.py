"""The network's bookings over time: one timeline per link direction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from braid.core.model.booking import Booking
from braid.core.model.loads import Direction, direction_loads

__all__ = ["Direction", "Network", "WindowView"]
from braid.core.model.timeline import OverbookingError, Timeline
from braid.core.model.topology import Hop, Topology

if TYPE_CHECKING:
    from braid.core.model.stack import Stack


class Network:
    """A topology plus everything booked on it."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self._timelines: dict[Direction, Timeline] = {}
        for link in topology.links.values():
            self._timelines[(link.id, True)] = Timeline(link.capacity)
            self._timelines[(link.id, False)] = Timeline(link.capacity)
        self._rows = {key: row for row, key in enumerate(self._timelines)}
        # The a -> b timeline of each link, by link id alone (the hot lookup).
        self.forward = {link: self._timelines[(link, True)] for link in topology.links}
        self.bookings: dict[str, Booking] = {}
        # Links carrying a one-way booking; on every other link both
        # directions hold the same levels, so reading one of them is enough.
        self.one_way: Counter[str] = Counter()
        # Bumped by every commit and release: what was derived from the
        # timelines before is stale once it moves (the stack follows itself).
        self.version = 0
        self._stack: Stack | None = None
        self._forward_rows: tuple[Any, list[int]] | None = None
        # Views of the current version by window: a refusal's searches (the
        # refused one, widest, max flow) all read the same window.
        self._views: dict[tuple[int, int, bool], WindowView] = {}
        self._last_change: tuple[tuple[int, int], int | None] | None = None
        # What depends on the topology alone (e.g. a pair's max flow with
        # nothing booked): kept for the network's life, whatever is booked.
        self.static: dict[Hashable, object] = {}

    def timeline(self, link: str, forward: bool) -> Timeline:
        return self._timelines[(link, forward)]

    def timelines(self) -> Mapping[Direction, Timeline]:
        return self._timelines

    def stack(self) -> tuple[dict[Direction, int], Stack]:
        """Every timeline in one `Stack` (rows in `timelines()` order), built once.

        Later bookings and releases only mark the rows they change; the stack
        patches those when a scan next reads them.
        """
        if self._stack is None:
            from braid.core.model.stack import Stack  # numpy loads only when needed

            self._stack = Stack(list(self._timelines.values()))
        return self._rows, self._stack

    def forget_stack(self) -> None:
        """Drop the stack: the next scan that wants one builds it afresh from every timeline.

        Until then short scans loop over the links; this was the state after
        every change before the stack followed the changes (benchmarks' baseline).
        """
        self._stack = None

    def forward_rows(self) -> tuple[Any, list[int]]:
        """The stack rows of every link's a -> b timeline (an int64 array), and capacities."""
        if self._forward_rows is None:
            import numpy as np

            rows = [self._rows[(link, True)] for link in self.topology.links]
            capacities = [self.forward[link].capacity for link in self.topology.links]
            self._forward_rows = (np.array(rows, dtype=np.int64), capacities)
        return self._forward_rows

    def stack_ready(self) -> bool:
        """Whether `stack()` is built: then it is kept up to date at the cost of the changes."""
        return self._stack is not None

    def loads(self, booking: Booking) -> dict[Direction, int]:
        """What `booking` puts on each link direction (paths may share links)."""
        return direction_loads(booking, self.topology)

    def shortfall(
        self, booking: Booking, loads: Mapping[Direction, int] | None = None
    ) -> list[tuple[Direction, int]]:
        """Link directions that lack room for `booking` (its `loads`, if known already),
        with how much is missing."""
        short = []
        for key, load in (self.loads(booking) if loads is None else loads).items():
            free = self._timelines[key].free(booking.start, booking.end)
            if load > free:
                short.append((key, load - free))
        return short

    def commit(self, booking: Booking) -> None:
        """Book all of `booking` or nothing."""
        if booking.id in self.bookings:
            raise ValueError(f"booking {booking.id!r} exists already")
        loads = self.loads(booking)
        short = self.shortfall(booking, loads)
        if short:
            (link, _), missing = short[0]
            raise OverbookingError(f"link {link} lacks {missing} bit/s for booking {booking.id}")
        self._changed(loads, booking)
        for key, load in loads.items():
            self._timelines[key].book(booking.start, booking.end, load)
        self.bookings[booking.id] = booking
        if not booking.symmetric:
            self.one_way.update(self._links_of(booking))

    def release(self, booking_id: str) -> Booking:
        booking = self.bookings.pop(booking_id)
        loads = self.loads(booking)
        self._changed(loads, booking)
        for key, load in loads.items():
            self._timelines[key].release(booking.start, booking.end, load)
        if not booking.symmetric:
            self.one_way.subtract(self._links_of(booking))
        return booking

    def _changed(self, keys: Iterable[Direction], booking: Booking) -> None:
        """Mark the timelines of `keys` as changing over the booking (first, come what may)."""
        self.version += 1
        self._views.clear()
        if self._stack is not None:
            rows = self._rows
            self._stack.touch([rows[key] for key in keys], booking.start, booking.end)

    @staticmethod
    def _links_of(booking: Booking) -> set[str]:
        return {link for a in booking.allocations for link in a.path.links}

    def window(self, start: int, end: int, *, symmetric: bool = True) -> WindowView:
        """The free capacity throughout [start, end), shared until the network next changes.

        Searches of the same window in one state read each link once between
        them, and share what they keep in the view's `memo`.
        """
        key = (start, end, symmetric)
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= _VIEWS_KEPT:
                del self._views[next(iter(self._views))]  # the oldest
            view = self._views[key] = WindowView(self, start, end, symmetric)
        return view

    def last_change(self, before: int) -> int | None:
        """The last instant before `before` at which any booked level changes."""
        # Every earliest-start search past a refusal asks this with the same
        # `before`: one look at every timeline per version of the network.
        key = (self.version, before)
        if self._last_change is not None and self._last_change[0] == key:
            return self._last_change[1]
        ends = (t.last_breakpoint(before) for t in self._timelines.values())
        found = max((e for e in ends if e is not None), default=None)
        self._last_change = (key, found)
        return found

    def breakpoints(self, start: int, end: int) -> list[int]:
        """Every instant in [start, end) at which some link's booked level changes."""
        instants: set[int] = set()
        for timeline in self._timelines.values():
            instants.update(timeline.breakpoints(start, end))
        return sorted(instants)


# Windows whose views are kept at once (a few searches at most share one).
_VIEWS_KEPT = 8

# Networks at least this large read all free bandwidths at once (`prefetch`).
PREFETCH_LINKS = 300


class WindowView:
    """Free capacity of every hop throughout one window, computed once per link."""

    __slots__ = (
        "_cache",
        "_forward",
        "_one_way",
        "_pair",
        "end",
        "memo",
        "network",
        "start",
        "symmetric",
    )

    def __init__(self, network: Network, start: int, end: int, symmetric: bool) -> None:
        self.network = network
        self.start = start
        self.end = end
        self.symmetric = symmetric
        # Read on every call of `usable`: kept here, one attribute lookup away.
        self._forward = network.forward
        self._one_way = network.one_way
        # Keyed by link id where both directions agree (symmetric, no one-way
        # booking on the link), else by (link, forward): strings hash in C,
        # a Hop would hash in Python on every call of this hot method.
        self._cache: dict[str, int] = {}
        self._pair: dict[Direction, int] = {}
        # Results derived from this window by searches that share them
        # (e.g. the successive widest paths of a pair), keyed by their users.
        self.memo: dict[Hashable, object] = {}

    @property
    def topology(self) -> Topology:
        return self.network.topology

    def prefetch(self) -> None:
        """Read the free bandwidth of every link at once, for searches that read them all.

        Only when the network's timelines are stacked already and the network
        is large: then one numpy pass beats a lookup per link.
        """
        network = self.network
        links = network.topology.links
        if not self.symmetric or len(links) < PREFETCH_LINKS or not network.stack_ready():
            return
        forward_rows, capacities = network.forward_rows()
        highest = network.stack()[1].max_levels(self.start, self.end, forward_rows).tolist()
        free = dict(zip(links, map(int.__sub__, capacities, highest), strict=True))
        # Links with a one-way booking differ by direction: left to `usable`.
        for link, count in network.one_way.items():
            if count:
                free.pop(link, None)
        free.update(self._cache)
        self._cache = free

    def without(self, links: Iterable[str]) -> WindowView:
        """This window with nothing free on `links` (say, links with no VLAN left): a
        view of its own, not the network's shared one, with what this one read so far."""
        view = WindowView(self.network, self.start, self.end, self.symmetric)
        view._cache.update(self._cache)
        view._pair.update(self._pair)
        for link in links:
            view._cache[link] = 0
            view._pair[(link, True)] = view._pair[(link, False)] = 0
        return view

    def by_link(self, hops: Iterable[Hop]) -> Mapping[str, int]:
        """A symmetric window's `usable` by link id, read for every one of `hops` at least.

        Both directions of a link offer the same in a symmetric window, so a
        caller reading many hops looks each up by link id, in C, instead of
        calling `usable` per hop. Do not modify the result.
        """
        assert self.symmetric, "only a symmetric window offers the same both ways"
        cache, forward, one_way = self._cache, self._forward, self._one_way
        start, end = self.start, self.end
        for hop in hops:
            link = hop.link
            if link not in cache:
                if one_way.get(link):
                    self.usable(hop)  # the directions differ: the less free one
                else:
                    cache[link] = forward[link].free(start, end)  # as `usable` reads it
        return cache

    def usable(self, hop: Hop) -> int:
        """Bandwidth a new booking can take crossing `hop` throughout the window."""
        link = hop.link
        if self.symmetric:
            cached = self._cache.get(link)
            if cached is not None:
                return cached
            if not self._one_way.get(link):
                # Both directions hold the same levels: one lookup serves both.
                free = self._forward[link].free(self.start, self.end)
                self._cache[link] = free
                return free
        key = (link, hop.forward)
        cached = self._pair.get(key)
        if cached is not None:
            return cached
        network = self.network
        free = network.timeline(link, hop.forward).free(self.start, self.end)
        if self.symmetric:
            back = network.timeline(link, not hop.forward).free(self.start, self.end)
            free = min(free, back)
            self._cache[link] = free  # the same both ways once both are read
        self._pair[key] = free
        return free
