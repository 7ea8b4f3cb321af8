"""Earliest start over several paths: never later than the single-path answer."""

from __future__ import annotations

from collections.abc import Iterator

from braid.core.graph.search import shortest_feasible_path
from braid.core.model.network import Network, WindowView
from braid.core.multipath.hopeless import CutBounds, first_start_reaching, next_start
from braid.core.multipath.mdi import DEFAULT_POLICY, MdiPolicy
from braid.core.multipath.plan import Gate, SplitPlan
from braid.core.multipath.split import check_positive, check_request, has_plan, plan_in_view
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
    refused_at_start: bool = False,
) -> tuple[int, SplitPlan] | None:
    """The earliest start (with its plan) at which at most `max_paths` paths carry `need`.

    The single-path earliest start tau1 is computed first; only starts before
    it are tried with several paths, so the answer is never later than tau1.
    Before tau1 the starts tried are `not_before` and the instants where a
    booking ends (see `candidate_starts`), in order; the first with a plan
    wins, else tau1 with its single path. None when neither exists.
    `refused_at_start` says the caller has just seen `not_before` refused
    with the same paths and mode: no plan is sought there again.
    """
    check_request(network, src, dst, max_paths, mode)
    check_positive(need, "need")
    check_positive(duration, "duration")
    search = _Search(network, src, dst, need, max_paths, symmetric, duration)
    search.gate, search.with_plan = Gate(network.topology, mode, policy), True
    found, single = search.earliest(not_before, not_after, refused_at_start)
    if found is not None:
        assert search.plan is not None, "a start found without its plan"
        return found, search.plan
    if single is None:
        return None
    view = network.window(single, single + duration, symmetric=symmetric)
    plan = plan_in_view(view, src, dst, need, max_paths, search.gate)
    if plan is None:
        raise RuntimeError(f"the single-path start {single} admits no plan")
    return single, plan


def split_earliest_start(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    not_before: int,
    *,
    max_paths: int,
    mode: str = "flow",
    symmetric: bool = True,
    policy: MdiPolicy = DEFAULT_POLICY,
) -> int | None:
    """The start `split_earliest` answers after `not_before` was refused, without its plan.

    A refusal only names the start: a plan is worked out only where no
    single path shows at once that one exists.

    The single-path earliest start, which `split_earliest` works out first
    to bound its search, is not needed here: wherever one path carries the
    demand there is a plan (`split_in_view` plans that path), so the first
    start with a plan is never later than it, and the search over every
    start worth trying (up to `last_useful_start`) finds that one itself.
    """
    check_request(network, src, dst, max_paths, mode)
    check_positive(need, "need")
    check_positive(duration, "duration")
    search = _Search(network, src, dst, need, max_paths, symmetric, duration)
    search.gate = Gate(network.topology, mode, policy)
    if search.bounds.never():
        return None  # no path, nor any set of them, fits with nothing booked
    stop = last_useful_start(network, duration, not_before, None)
    return search.first(not_before, stop, skip_first=True)


class _Search:
    """Starts tried in order; those a too small cut rules out are passed over in one step."""

    def __init__(
        self,
        network: Network,
        src: str,
        dst: str,
        need: int,
        max_paths: int,
        symmetric: bool,
        duration: int,
    ) -> None:
        self.network, self.duration = network, duration
        self.bounds = CutBounds(network, src, dst, need, max_paths, symmetric)
        self.gate = Gate(network.topology, "flow", DEFAULT_POLICY)
        self.with_plan = False  # whether a start found must come with its plan
        self.plan: SplitPlan | None = None

    def earliest(
        self, not_before: int, not_after: int | None, refused_at_start: bool
    ) -> tuple[int | None, int | None]:
        """The first split start before the single path's, if any, and the single path's start."""
        bounds, network = self.bounds, self.network
        if bounds.never():
            return None, None  # no path, nor any set of them, fits with nothing booked
        single = earliest_start(
            network,
            bounds.src,
            bounds.dst,
            bounds.need,
            self.duration,
            not_before,
            not_after,
            symmetric=bounds.symmetric,
            refused_at_start=refused_at_start,
        )
        stop = (
            single
            if single is not None
            else last_useful_start(network, self.duration, not_before, not_after)
        )
        return self.first(not_before, stop, skip_first=refused_at_start), single

    def first(self, lo: int, stop: int, *, skip_first: bool) -> int | None:
        """The first start in [lo, stop) with a plan; `skip_first`: lo is known to have none.

        Every start passed over either has a cut smaller than the demand, or
        lies strictly between two instants where levels drop, where no
        start fits unless the one before it does (`candidate_starts`).
        """
        bounds, network = self.bounds, self.network
        start: int | None = lo
        while start is not None and start < stop:
            view = network.window(start, start + self.duration, symmetric=bounds.symmetric)
            tried = skip_first and start == lo
            cut = bounds.known_cut(view.usable)
            # One path with room settles a start before any costlier proof is
            # sought that it is hopeless: it carries the demand across every cut.
            if cut is None and not tried and self._one_path(view):
                return start
            if cut is None:
                cut = bounds.hopeless(view.usable, known_tried=True)
            if cut is not None:
                start = first_start_reaching(bounds, cut, start, stop, self.duration)
                continue
            if not tried and self._fits(view):
                return start
            start = next_start(network, start, stop)
        return None

    def _one_path(self, view: WindowView) -> bool:
        """Whether one path carries the demand (only asked when no plan is kept)."""
        b = self.bounds
        if self.with_plan:
            return False
        return shortest_feasible_path(view.topology, b.src, b.dst, view.usable, b.need) is not None

    def _fits(self, view: WindowView) -> bool:
        """Whether `split_in_view` would plan this window (keeping the plan if asked to)."""
        b = self.bounds
        if not self.with_plan:
            # `_one_path` has already looked for one path.
            return has_plan(view, b.src, b.dst, b.need, b.paths, self.gate)
        self.plan = plan_in_view(view, b.src, b.dst, b.need, b.paths, self.gate)
        return self.plan is not None


def candidate_starts(network: Network, lo: int, hi: int) -> Iterator[int]:
    """`lo`, then every instant in (lo, hi) at which some link's booked level drops.

    `split_earliest` tries these in order (finding each as it goes, see
    `hopeless.next_start`), and the tests sweep them all as the reference.

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
