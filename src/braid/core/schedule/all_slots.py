"""ALL-SLOTS: every start time at which some path carries `need` for `duration`.

A Bellman-Ford over the closed semiring of interval sets: a node's label is
the set of start times at which it is reachable from the source; crossing a
link intersects the label with the link's own feasible starts, and labels
meeting at a node are united. Labels only grow, so the search reaches a
fixed point.

Only what is new in a label is pushed on (semi-naive evaluation: intersection
distributes over union, so the fixed point is the same, but a span crosses a
hop once instead of once per round), nodes are expanded nearest-first, and
starts already known to reach the destination travel no further.
"""

from __future__ import annotations

import heapq
from collections import deque

from braid.core.intervals import IntervalSet
from braid.core.network import Network
from braid.core.topology import Hop, Topology


def all_slots(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    symmetric: bool = True,
) -> IntervalSet:
    """Start instants s in [first_start, stop) such that [s, s + duration) fits `need`."""
    if src == dst or first_start >= stop or duration <= 0:
        return IntervalSet()
    starts = _LinkStarts(network, need, duration, first_start, stop, symmetric)
    window = _useful_window(starts, network.topology, src, dst)
    if not window:
        return IntervalSet()
    search = _Search(network.topology, src, dst, window, starts)
    rank = _hop_rank(network.topology, src)
    queue: list[tuple[int, str]] = [(0, src)]
    while queue:
        _, node = heapq.heappop(queue)
        # Starts already known to reach dst need not travel any further.
        delta = search.fresh.pop(node).difference(search.found)
        for to, reach in search.expand(node, delta):
            if search.wait(to, reach) is None:
                heapq.heappush(queue, (rank[to], to))
    return search.found


def first_slot(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    symmetric: bool = True,
) -> int | None:
    """The first start of `all_slots`, found best-first without the rest of the set.

    Deltas are expanded in order of their first instant, and a crossing never
    makes a span start earlier, so once no queued delta starts before the best
    start found at dst, nothing can beat it.
    """
    if src == dst or first_start >= stop or duration <= 0:
        return None
    starts = _LinkStarts(network, need, duration, first_start, stop, symmetric)
    window = _useful_window(starts, network.topology, src, dst)
    if not window:
        return None
    search = _Search(network.topology, src, dst, window, starts)
    queue: list[tuple[int, str]] = [(window.spans[0][0], src)]
    while queue:
        first, node = heapq.heappop(queue)
        best = search.found.first()
        if best is not None and first >= best:
            break
        delta = search.fresh.get(node)
        if delta is None or delta.first() != first:
            continue  # superseded by an entry with an earlier first instant
        del search.fresh[node]
        for to, reach in search.expand(node, delta):
            best = search.found.first()
            if best is not None and reach.spans[0][0] >= best:
                continue
            waiting = search.wait(to, reach)
            merged = search.fresh[to]
            if waiting is None or merged.spans[0][0] < waiting.spans[0][0]:
                heapq.heappush(queue, (merged.spans[0][0], to))
    return search.found.first()


class _Search:
    """Labels, pending deltas and what has reached dst, shared by both searches."""

    def __init__(
        self, topology: Topology, src: str, dst: str, window: IntervalSet, starts: _LinkStarts
    ) -> None:
        self.topology = topology
        self.src = src
        self.dst = dst
        self.starts = starts
        self.labels: dict[str, IntervalSet] = {src: window}
        self.fresh: dict[str, IntervalSet] = {src: window}
        self.found = IntervalSet()
        self.chains: dict[Hop, tuple[str, IntervalSet]] = {}

    def expand(self, node: str, delta: IntervalSet) -> list[tuple[str, IntervalSet]]:
        """Push `delta` over every hop out of `node`; the new starts each neighbour gains.

        Gains at dst go into `found` and are not returned: dst is never expanded.
        """
        out: list[tuple[str, IntervalSet]] = []
        if not delta:
            return out
        for hop in self.topology.hops(node):
            to, feasible = self.chain(hop)
            if to == self.src:
                continue
            reach = delta.intersection(feasible)
            if not reach:
                continue
            old = self.labels.get(to)
            if old is not None:
                reach = reach.difference(old)
                if not reach:
                    continue
                reach_all = old.union(reach)
            else:
                reach_all = reach
            self.labels[to] = reach_all
            if to == self.dst:
                self.found = reach_all
            else:
                out.append((to, reach))
        return out

    def chain(self, hop: Hop) -> tuple[str, IntervalSet]:
        """Follow `hop` through nodes of degree two; where it ends and its feasible starts.

        A node with two hops only passes starts on from one to the other, so
        a chain of them acts as one hop whose feasible starts are the
        intersection of its hops'. Computed once per search and chain start.
        """
        found = self.chains.get(hop)
        if found is not None:
            return found
        feasible = self.starts.of(hop)
        here = hop
        while feasible and here.to not in (self.src, self.dst):
            onward = self.topology.hops(here.to)
            if len(onward) != 2:
                break
            here = onward[0] if onward[1].link == here.link else onward[1]
            feasible = feasible.intersection(self.starts.of(here))
        self.chains[hop] = (here.to, feasible)
        return here.to, feasible

    def wait(self, node: str, reach: IntervalSet) -> IntervalSet | None:
        """Add `reach` to what `node` has still to push on; what was waiting before."""
        waiting = self.fresh.get(node)
        self.fresh[node] = reach if waiting is None else waiting.union(reach)
        return waiting


def _useful_window(starts: _LinkStarts, topology: Topology, src: str, dst: str) -> IntervalSet:
    """Starts at which some hop leaves src and some hop enters dst: no others can work."""
    lo, hi = starts.args[2], starts.args[3]
    leaving, entering = IntervalSet(), IntervalSet()
    for hop in topology.hops(src):
        leaving = leaving.union(starts.of(hop))
    for hop in topology.hops(dst):
        entering = entering.union(starts.of(Hop(hop.link, dst, not hop.forward)))
    return IntervalSet.span(lo, hi).intersection(leaving).intersection(entering)


def _hop_rank(topology: Topology, src: str) -> dict[str, int]:
    """Hop count from src (BFS).

    Expanding nearer nodes first lets labels fill up before they are pushed
    on, so far fewer small deltas travel.
    """
    rank = {src: 0}
    todo = deque([src])
    while todo:
        node = todo.popleft()
        for hop in topology.hops(node):
            if hop.to not in rank:
                rank[hop.to] = rank[node] + 1
                todo.append(hop.to)
    return rank


class _LinkStarts:
    """Feasible starts of each hop, computed once per link direction."""

    def __init__(
        self, network: Network, need: int, duration: int, lo: int, hi: int, symmetric: bool
    ) -> None:
        self.network = network
        self.args = (need, duration, lo, hi)
        self.symmetric = symmetric
        self.cache: dict[tuple[str, bool], IntervalSet] = {}

    def of(self, hop: Hop) -> IntervalSet:
        key = (hop.link, hop.forward or self.symmetric)
        found = self.cache.get(key)
        if found is None:
            found = self._compute(hop)
            self.cache[key] = found
        return found

    def _compute(self, hop: Hop) -> IntervalSet:
        need, duration, lo, hi = self.args
        there = self.network.timeline(hop.link, hop.forward)
        blocked = there.blocked_starts(need, duration, lo, hi)
        if self.symmetric:
            back = self.network.timeline(hop.link, not hop.forward)
            # Symmetric bookings load both directions alike, so the two
            # timelines are usually equal; comparing them is far cheaper
            # than scanning the second one.
            if not back.same_between(there, lo, hi + duration - 1):
                blocked = blocked + back.blocked_starts(need, duration, lo, hi)
        return IntervalSet.span(lo, hi).difference(IntervalSet.of(blocked))
