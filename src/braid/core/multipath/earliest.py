"""Earliest start over several paths: never later than the single-path answer."""

from __future__ import annotations

from collections.abc import Iterator

from braid.core.model.network import Network
from braid.core.model.topology import Topology
from braid.core.multipath.maxflow import (
    Cut,
    Usable,
    cut_capacity,
    endpoint_cuts,
    link_usable,
    min_cut,
)
from braid.core.multipath.mdi import DEFAULT_POLICY, MdiPolicy
from braid.core.multipath.plan import Gate, SplitPlan
from braid.core.multipath.split import check_positive, check_request, split_in_view
from braid.core.schedule import earliest_start
from braid.core.schedule.earliest import last_useful_start


def split_earliest(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    not_before: int,
    not_after: int | None = None,
    *,
    max_paths: int,
    mode: str = "flow",
    symmetric: bool = True,
    policy: MdiPolicy = DEFAULT_POLICY,
) -> tuple[int, SplitPlan] | None:
    """The earliest start (with its plan) at which at most `max_paths` paths carry `need`.

    The single-path earliest start tau1 is computed first; only starts before
    it are tried with several paths, so the answer is never later than tau1.
    Before tau1 the starts tried are `not_before` and the instants where a
    booking ends (see `candidate_starts`), in order; the first with a plan
    wins, else tau1 with its single path. None when neither exists.
    """
    check_request(network, src, dst, max_paths, mode)
    check_positive(need, "need")
    check_positive(duration, "duration")
    gate = Gate(network.topology, mode, policy)
    single = earliest_start(
        network, src, dst, need, duration, not_before, not_after, symmetric=symmetric
    )
    stop = (
        single
        if single is not None
        else last_useful_start(network, duration, not_before, not_after)
    )
    bounds = _CutBounds(network.topology, src, dst, need, symmetric)
    # More than the max flow with nothing booked never fits: no start to try.
    starts = candidate_starts(network, not_before, stop) if need <= bounds.static_bound() else ()
    skip_until = not_before
    for start in starts:
        if start < skip_until:
            continue
        view = network.window(start, start + duration, symmetric=symmetric)
        cut = bounds.hopeless(view.usable)
        if cut is not None:
            # The cut stays too small until one of its links frees some room.
            later = next_drop(network, cut, start)
            if later is None:
                break
            skip_until = later
            continue
        plan = split_in_view(view, src, dst, need, max_paths, gate)
        if isinstance(plan, SplitPlan):
            return start, plan
    if single is None:
        return None
    view = network.window(single, single + duration, symmetric=symmetric)
    plan = split_in_view(view, src, dst, need, max_paths, gate)
    if not isinstance(plan, SplitPlan):
        raise RuntimeError(f"the single-path start {single} admits no plan")
    return single, plan


class _CutBounds:
    """Rules out windows whose max flow cannot reach `need`, cheapest test first.

    Any cut bounds every flow, so a cut too small in one window, re-read in
    the next, often proves that one hopeless as well at the cost of a few
    links instead of a max flow over the whole graph: windows slide a little
    and the bottleneck tends to stay where it was.
    """

    KEEP = 8  # the most recent cuts that proved a window hopeless

    def __init__(self, topology: Topology, src: str, dst: str, need: int, symmetric: bool) -> None:
        self.topology, self.src, self.dst, self.need = topology, src, dst, need
        self.symmetric = symmetric
        self.fixed = endpoint_cuts(topology, src, dst)
        self.learned: list[Cut] = []

    def static_bound(self) -> int:
        """The max flow with nothing booked: no window offers more."""
        links = self.topology.links
        return min_cut(self.topology, self.src, self.dst, lambda hop: links[hop.link].capacity)[0]

    def hopeless(self, usable: Usable) -> Cut | None:
        """A cut too small for `need` in this window, or None when the max flow reaches it."""
        joint = link_usable(self.topology, usable, symmetric=self.symmetric)
        for cut in (*self.fixed, *self.learned):
            if cut_capacity(cut, joint) < self.need:
                return cut
        value, cut = min_cut(self.topology, self.src, self.dst, joint, symmetric=self.symmetric)
        if value >= self.need:
            return None
        self.learned = [cut, *self.learned[: self.KEEP - 1]]
        return cut


def next_drop(network: Network, cut: Cut, after: int) -> int | None:
    """The first instant after `after` at which a link of `cut` sees its level drop.

    Moving a window's start from s to s + 1 drops the instant s and adds
    s + duration; the highest level in it can only fall when the level at
    s + 1 is below the level at s, i.e. where some booking ends. So the free
    capacity of every link, and the capacity of `cut`, cannot grow for any
    start before the next such instant on one of its links (either
    direction, whichever the window reads): every start before it is as
    hopeless as this one.
    """
    found: int | None = None
    for link in {hop.link for hop in cut}:
        for forward in (True, False):
            drop = network.timeline(link, forward).next_drop(after)
            if drop is not None and (found is None or drop < found):
                found = drop
    return found


def candidate_starts(network: Network, lo: int, hi: int) -> Iterator[int]:
    """`lo`, then every instant in (lo, hi) at which some link's booked level drops.

    Why no other start can be the earliest: let s > lo be feasible and let no
    level drop at s. Moving the window from [s, s + d) to [s - 1, s - 1 + d)
    drops the instant s + d - 1 and adds s - 1, whose level on every link
    direction is at most the level at s, which the window already held. So
    the maximum booked level of every link direction over the window does
    not grow, free capacity does not shrink (nor its minimum over both
    directions), and the same paths and shares still fit at s - 1. Repeating
    this, the earliest feasible start is `lo` or an instant where a booking
    ends. These are the breakpoints of `Network.breakpoints` less those where
    levels only rise (bookings start), which cannot help and would double
    the work.
    """
    if lo >= hi:
        return
    yield lo
    drops: set[int] = set()
    for (link, forward), timeline in network.timelines().items():
        # Without a one-way booking both directions of a link hold the same levels.
        if forward or network.one_way.get(link):
            drops.update(timeline.drops(lo, hi))
    drops.discard(lo)
    yield from sorted(drops)
