"""Proofs that a window cannot carry a demand over k paths, and how far they reach in time.

The earliest start over several paths tries starts in order. Most of them,
on a busy network, fail for the same reason: some cut between the two ends
offers too little for k paths (`maxflow.cut_offered`; with k at least the
cut's size, its whole capacity: the max-flow bound). While a cut offers
less than the demand no start can succeed, and `first_start_reaching`
finds the first start at which it no longer does, reading only the cut's
own links (one numpy pass per link) instead of testing every start in
between.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import TYPE_CHECKING

from braid.core.graph.reach import static_width
from braid.core.graph.sides import nearer_wall
from braid.core.model.network import Network
from braid.core.model.timeline import Timeline, free_from_many
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.dinic import has_run
from braid.core.multipath.maxflow import (
    Cut,
    Usable,
    cut_offered,
    endpoint_cuts,
    link_usable,
    min_cut,
)

if TYPE_CHECKING:
    from braid.core.model.timeline import Ints

# Starts read at once when a cut is followed forward: small enough that a
# cut freed soon costs little, doubled each round so a long wait costs few
# rounds. A week of bookings gives a cut some hundreds of drops; on Esnet's
# split refusals half the cuts free up within the first 50, and 128 read the
# fewest (256 and 64 cost about 1 % more in all).
FIRST_BATCH = 128


class CutBounds:
    """Rules out windows where `paths` paths cannot carry `need`, cheapest test first.

    A cut too small in one window, re-read in the next, often proves that
    one hopeless as well at the cost of a few links instead of a search over
    the whole graph: windows slide a little and the bottleneck tends to stay
    where it was.
    """

    KEEP = 8  # the most recent cuts that proved a window hopeless

    def __init__(
        self, network: Network, src: str, dst: str, need: int, paths: int, symmetric: bool
    ) -> None:
        self.network, self.src, self.dst, self.need = network, src, dst, need
        self.paths, self.symmetric = paths, symmetric
        self.fixed = endpoint_cuts(network.topology, src, dst)
        self.learned: list[Cut] = []

    @property
    def topology(self) -> Topology:
        return self.network.topology

    def never(self) -> bool:
        """Whether no window can ever do: a cut offers too little with nothing booked."""
        links = self.topology.links

        def capacity(hop: Hop) -> int:
            return links[hop.link].capacity

        # One path as wide as the demand with nothing booked crosses every cut
        # on a hop that wide, so no cut (nor the max flow) falls short: the
        # widths are kept per source, no search is needed.
        if static_width(self.topology, self.src, self.dst) >= self.need:
            return False
        if self._small_cut(capacity) is not None:
            return True
        key: Hashable = ("max flow with nothing booked", self.src, self.dst)
        value = self.network.static.get(key)
        if not isinstance(value, int):
            # A link's capacity is the same both ways: taking the less of the
            # two directions (symmetric) would change no arc, only cost a call.
            value = min_cut(self.topology, self.src, self.dst, capacity, symmetric=False)[0]
            self.network.static[key] = value
        return value < self.need

    def hopeless(self, usable: Usable, *, known_tried: bool = False) -> Cut | None:
        """A cut offering less than `need` in this window, or None when none was found.

        None does not promise a plan: the search for one decides.
        `known_tried`: `known_cut` has just found none in this window.
        """
        joint = link_usable(self.topology, usable, symmetric=self.symmetric)
        # Which cut proves it does not matter (every start skipped is hopeless
        # whichever it is): where the window's max flow has run already, its
        # min cut costs less than a search for a wall.
        ran = has_run(joint, self.src, self.dst)
        cut = self._min_cut(joint) if ran else None
        if cut is None:
            cut = self._small_cut(joint, known_tried=known_tried)
        if cut is None and not ran:
            cut = self._min_cut(joint)
        if cut is None:
            return None
        if cut not in self.learned:
            self.learned = [cut, *self.learned[: self.KEEP - 1]]
        return cut

    def _min_cut(self, joint: Usable) -> Cut | None:
        """The window's minimum cut when it offers less than `need`, else None."""
        value, cut = min_cut(self.topology, self.src, self.dst, joint, symmetric=self.symmetric)
        if value >= self.need and cut_offered(cut, joint, self.paths) >= self.need:
            return None
        return cut

    def known_cut(self, usable: Usable) -> Cut | None:
        """A cut known already (around an end, or learned) that offers less than `need`.

        The cheapest test: a few hops each, no search.
        """
        joint = link_usable(self.topology, usable, symmetric=self.symmetric)
        for cut in (*self.fixed, *self.learned):
            if cut_offered(cut, joint, self.paths) < self.need:
                return cut
        return None

    def _small_cut(self, usable: Usable, *, known_tried: bool = False) -> Cut | None:
        """A cut known already, or a wall around one end, that offers less than `need`."""
        for cut in () if known_tried else (*self.fixed, *self.learned):
            if cut_offered(cut, usable, self.paths) < self.need:
                return cut
        # One of the paths carries at least need / paths: without a route that
        # wide, the wall around one end has less than that on each of its hops.
        floor = -(-self.need // self.paths)
        wall = nearer_wall(self.topology, (self.src, self.dst), usable, floor)
        return None if wall is None else tuple(hop for hop, _ in wall)


def read_timelines(network: Network, hop: Hop, symmetric: bool) -> tuple[Timeline, ...]:
    """The timelines whose free capacity `WindowView.usable` reads for `hop` (the least)."""
    link = hop.link
    if not symmetric:
        return (network.timeline(link, hop.forward),)
    if not network.one_way.get(link):
        return (network.forward[link],)  # both directions hold the same levels
    return (network.timeline(link, True), network.timeline(link, False))


def first_start_reaching(
    bounds: CutBounds, cut: Cut, after: int, stop: int, duration: int
) -> int | None:
    """The first start in (after, stop) at which `cut` offers `bounds.need`, or None.

    Moving a window's start from s to s + 1 drops the instant s and adds
    s + duration; the highest level in it can only fall when the level at
    s + 1 is below the level at s, i.e. where some booking ends. So a link's
    free capacity, and what the cut offers, can only grow at such instants
    of the cut's own links (either direction, whichever the window reads):
    the cut is read there, and every start in between is as hopeless as the
    one before it.
    """
    import numpy as np  # loaded only by the vectorised scans that need it

    network = bounds.network
    readers = [read_timelines(network, hop, bounds.symmetric) for hop in cut]
    read = list(dict.fromkeys(t for ts in readers for t in ts))  # each timeline once
    row_of = {id(t): row for row, t in enumerate(read)}
    # Mostly each hop reads one timeline of its own: then `read` lists them
    # in the cut's order, and its rows are the hops' rows as they are.
    own = len(read) == len(readers) and all(len(timelines) == 1 for timelines in readers)
    starts = _union([t.drop_times(after, stop) for t in read])
    for batch in _batches(len(starts)):
        chunk = starts[batch]
        free = each = free_from_many(read, chunk, duration)
        if not own:
            free = np.empty((len(readers), len(chunk)), dtype=np.int64)
            for row, timelines in enumerate(readers):
                free[row] = each[row_of[id(timelines[0])]]
                for other in timelines[1:]:
                    np.minimum(free[row], each[row_of[id(other)]], out=free[row])
        np.maximum(free, 0, out=free)
        if bounds.paths < len(readers):  # else every hop counts: nothing to choose
            free.sort(axis=0)
        enough = free[-bounds.paths :].sum(axis=0) >= bounds.need
        first = int(enough.argmax())  # the first True, if any
        if enough[first]:
            return int(chunk[first])
    return None


def _union(sorted_arrays: list[Ints]) -> Ints:
    """The distinct values of sorted int64 arrays, in order."""
    import numpy as np

    if len(sorted_arrays) == 1:
        return sorted_arrays[0]  # sorted and distinct already
    every = np.concatenate(sorted_arrays) if sorted_arrays else np.zeros(0, np.int64)
    every.sort()
    if len(every) < 2:
        return every
    keep = np.empty(len(every), dtype=bool)
    keep[0] = True
    np.not_equal(every[1:], every[:-1], out=keep[1:])
    return every[keep]


def _batches(count: int) -> Iterator[slice]:
    """Consecutive slices of `count` items, each twice as long as the one before."""
    begin, size = 0, FIRST_BATCH
    while begin < count:
        yield slice(begin, begin + size)
        begin, size = begin + size, 2 * size


def next_start(network: Network, after: int, stop: int) -> int | None:
    """The first instant in (after, stop) at which some link's booked level drops.

    The next start worth trying after a refused one (see
    `earliest.candidate_starts`), found without listing all of them.
    """
    found: int | None = None
    for timeline in _distinct_timelines(network):
        drop = timeline.next_drop(after)
        if drop is not None and drop < stop and (found is None or drop < found):
            found = drop
    return found


def _distinct_timelines(network: Network) -> Iterable[Timeline]:
    """One timeline per link, both where a one-way booking makes the directions differ."""
    for (link, forward), timeline in network.timelines().items():
        if forward or network.one_way.get(link):
            yield timeline
