"""ALL-SLOTS: every start time at which some path carries `need` for `duration`.

A Bellman-Ford over the closed semiring of interval sets: a node's label is
the set of start times at which it is reachable from the source; crossing a
link intersects the label with the link's own feasible starts, and labels
meeting at a node are united. Labels only grow, so a queue of changed nodes
reaches the fixed point in at most n - 1 rounds.
"""

from __future__ import annotations

from collections import deque

from braid.core.intervals import IntervalSet
from braid.core.network import Network
from braid.core.topology import Hop


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
    labels: dict[str, IntervalSet] = {src: IntervalSet.span(first_start, stop)}
    queue: deque[str] = deque([src])
    queued = {src}
    topology = network.topology
    while queue:
        node = queue.popleft()
        queued.discard(node)
        label = labels[node]
        for hop in topology.hops(node):
            if hop.to == src:
                continue
            reach = label.intersection(starts.of(hop))
            if not reach:
                continue
            old = labels.get(hop.to, IntervalSet())
            new = old.union(reach)
            if new != old:
                labels[hop.to] = new
                if hop.to != dst and hop.to not in queued:
                    queue.append(hop.to)
                    queued.add(hop.to)
    return labels.get(dst, IntervalSet())


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
            blocked = blocked + back.blocked_starts(need, duration, lo, hi)
        return IntervalSet.span(lo, hi).difference(IntervalSet.of(blocked))
