"""ALL-SLOTS over several paths: every start at which at most k paths carry `need`.

A window [s, s + duration) covers the instants s .. s + duration - 1, and
the booked levels are constant between breakpoints. Moving s by one second
changes which pieces the window covers only where a piece leaves it (s is a
breakpoint) or one enters it (s + duration - 1 is a breakpoint). Between two
consecutive such instants the window's free capacities are the same, and so
is whether a split fits: each of these elementary spans is decided once, at
its first start, and the feasible ones are merged.

Most spans are settled without a flow search. A breakpoint on one link
often leaves every window maximum as it was (a piece enters lower than the
window's peak), so many spans see free capacities another span saw: the
decision is a function of those capacities alone and is kept per vector of
them (read for all spans at once, `free_from_many`). One path with room
settles a span at once, and a cut that offers too little
(`hopeless.CutBounds`) rules out every span until the first start at which
it offers enough (`first_start_reaching`), read from that cut's own links
only.
"""

from __future__ import annotations

from bisect import bisect_left

from braid.core.graph.search import shortest_feasible_path
from braid.core.model.intervals import IntervalSet, Span
from braid.core.model.network import Network
from braid.core.model.timeline import free_from_many
from braid.core.multipath.chains import Skeleton
from braid.core.multipath.hopeless import CutBounds, first_start_reaching
from braid.core.multipath.mdi import DEFAULT_POLICY, MdiPolicy
from braid.core.multipath.plan import Gate
from braid.core.multipath.split import check_positive, check_request, has_plan
from braid.core.schedule import all_slots


def split_all_slots(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    max_paths: int,
    mode: str = "flow",
    symmetric: bool = True,
    policy: MdiPolicy = DEFAULT_POLICY,
) -> IntervalSet:
    """Starts s in [first_start, stop) at which `split_fixed` plans [s, s + duration).

    With one path allowed this is what `schedule.all_slots` answers, found
    by the span sweep alone (the tests hold the two against each other).
    With more, the single-path answer is worked out first (its starts all
    have a plan: the one path) and only the spans outside it are searched.
    """
    check_request(network, src, dst, max_paths, mode)
    check_positive(need, "need")
    check_positive(duration, "duration")
    if first_start >= stop:
        return IntervalSet()
    bounds = CutBounds(network, src, dst, need, max_paths, symmetric)
    if bounds.never():
        return IntervalSet()  # no path, nor any set of them, fits with nothing booked
    known = IntervalSet()
    if max_paths > 1:
        known = all_slots(network, src, dst, need, duration, first_start, stop, symmetric=symmetric)
    sweep = _Sweep(bounds, Gate(network.topology, mode, policy), duration, stop)
    sweep.single_known = max_paths > 1
    starts = span_starts(network, duration, first_start, stop)
    return known.union(IntervalSet.of(sweep.feasible(starts, known)))


def span_starts(network: Network, duration: int, first_start: int, stop: int) -> list[int]:
    """The first start of every elementary span in [first_start, stop), in order.

    `first_start`, every breakpoint b (a piece leaves the window at s = b)
    and every b - duration + 1 (a piece enters it) that falls inside.
    """
    cuts = {first_start}
    for b in network.breakpoints(first_start, stop + duration):
        cuts.update(s for s in (b, b - duration + 1) if first_start < s < stop)
    return sorted(cuts)


def free_vectors(bounds: CutBounds, starts: list[int], duration: int) -> list[bytes]:
    """Per start, the free capacity over its window of every link a path may take, as a key.

    A simple path between the ends never enters a tree hanging off the
    graph (it could not come back), so only the links of the pair's
    skeleton count: two windows with the same key offer the same room on
    every hop a plan may use, and a split fits in both or in neither.
    """
    import numpy as np  # loaded only by the vectorised scans that need it

    network = bounds.network
    # A pair joined by one chain only may have no chain listed: then every link.
    links = (
        Skeleton.of(network.topology, (bounds.src, bounds.dst)).on_link or network.topology.links
    )
    timelines = [
        network.timeline(link, forward)
        for link in sorted(links)
        for forward in ((True, False) if network.one_way.get(link) else (True,))
    ]
    if not starts:
        return []
    free = free_from_many(timelines, np.asarray(starts, dtype=np.int64), duration)
    return [row.tobytes() for row in np.ascontiguousarray(free.T)]


class _Keys:
    """The key (`free_vectors`) of each span left to decide, read as the sweep reaches it.

    Read in batches that double up to a bound: a sweep that a cut carries
    far ahead reads little it then skips, and one that decides span after
    span reads them in few numpy passes.
    """

    FIRST, MOST = 32, 1024

    def __init__(self, bounds: CutBounds, starts: list[int], left: list[int], duration: int):
        self.bounds, self.starts, self.left, self.duration = bounds, starts, left, duration
        self.keys: dict[int, bytes] = {}
        self.size = self.FIRST

    def get(self, i: int) -> bytes | None:
        """Span i's key, or None for a span not left to decide."""
        key = self.keys.get(i)
        if key is not None:
            return key
        at = bisect_left(self.left, i)
        if at == len(self.left) or self.left[at] != i:
            return None
        batch = self.left[at : at + self.size]
        self.size = min(2 * self.size, self.MOST)
        vectors = free_vectors(self.bounds, [self.starts[j] for j in batch], self.duration)
        self.keys.update(zip(batch, vectors, strict=True))
        return self.keys[i]


class _Sweep:
    """Decides the elementary spans in order, skipping the runs a small cut rules out."""

    def __init__(self, bounds: CutBounds, gate: Gate, duration: int, stop: int) -> None:
        self.bounds, self.gate, self.duration, self.stop = bounds, gate, duration, stop
        # Whether the spans one path serves are known already: then a span
        # left to decide has no single path, and none is looked for.
        self.single_known = False

    def feasible(self, starts: list[int], known: IntervalSet) -> list[Span]:
        """The feasible spans among those beginning at `starts` (and ending at the next)."""
        found: list[Span] = []
        # A span's answer is constant: one inside the known set is known whole.
        left = [i for i, start in enumerate(starts) if start not in known]
        keys = _Keys(self.bounds, starts, left, self.duration)
        decided: dict[bytes, bool] = {}
        i = 0
        while i < len(starts):
            start = starts[i]
            end = starts[i + 1] if i + 1 < len(starts) else self.stop
            key = keys.get(i)
            if key is None or key in decided:
                if key is not None and decided[key]:
                    found.append((start, end))
                i += 1
                continue
            fits, hopeless_until = self._decide(start)
            decided[key] = fits
            if fits:
                found.append((start, end))
            # Every span before `hopeless_until` is as hopeless as this one.
            i = i + 1 if hopeless_until is None else bisect_left(starts, hopeless_until, i + 1)
        return found

    def _decide(self, start: int) -> tuple[bool, int | None]:
        """Whether the span fits, and when it does not, the first start that might."""
        b = self.bounds
        view = b.network.window(start, start + self.duration, symmetric=b.symmetric)
        cut = b.known_cut(view.usable)
        if cut is None and not self.single_known:
            path = shortest_feasible_path(view.topology, b.src, b.dst, view.usable, b.need)
            if path is not None:
                return True, None
        if cut is None:
            cut = b.hopeless(view.usable, known_tried=True)
        if cut is not None:
            reached = first_start_reaching(b, cut, start, self.stop, self.duration)
            return False, self.stop if reached is None else reached
        return has_plan(view, b.src, b.dst, b.need, b.paths, self.gate), None
