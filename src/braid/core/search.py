"""Single-path searches over the free capacity of a window.

Every search here is Dijkstra over a different label: latency for the
fastest feasible path, bottleneck then latency for the widest, latency then
hops then width for a tenant's sub-path. Each label only worsens as a path
grows and extending two labels by the same hop keeps their order, so one
label-setting search serves them all exactly.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from braid.core.landmarks import landmarks
from braid.core.paths import Path
from braid.core.topology import Hop, Topology

Usable = Callable[[Hop], int]
Label = tuple[Any, ...]
# How a label grows over one hop; None when the hop cannot be taken.
Extend = Callable[[Label, Hop], Label | None]

UNBOUNDED = 1 << 80  # a width larger than any link's capacity


def best_path(
    topology: Topology, src: str, dst: str, start: Label, extend: Extend
) -> tuple[Path, Label] | None:
    """The path from src to dst with the smallest label, and that label."""
    best: dict[str, Label] = {src: start}
    came: dict[str, tuple[str, Hop]] = {}
    heap: list[tuple[Label, str]] = [(start, src)]
    done: set[str] = set()
    while heap:
        label, node = heapq.heappop(heap)
        if node in done:
            continue
        if node == dst:
            return trace_path(src, dst, came), label
        done.add(node)
        for hop in topology.hops(node):
            if hop.to in done:
                continue
            grown = extend(label, hop)
            if grown is not None and (hop.to not in best or grown < best[hop.to]):
                best[hop.to] = grown
                came[hop.to] = (node, hop)
                heapq.heappush(heap, (grown, hop.to))
    return None


def shortest_feasible_path(
    topology: Topology, src: str, dst: str, usable: Usable, need: int
) -> Path | None:
    """The lowest-latency path whose every hop has at least `need` free.

    A* on the label (latency, hops), guided by landmark lower bounds on the
    latency still to go: the search behind every fixed-slot admission heads
    for dst instead of growing a disc around src. A consistent bound only
    shifts every path to a node by the same amount, so the labels compare as
    in plain Dijkstra and the path found is the same lowest-latency one (up
    to float rounding between paths whose latencies differ by ~1e-12 ms).
    Heap entries are (latency + bound, hops, node).
    """
    if src != dst and _cut_off(topology, src, dst, usable, need):
        return None
    adjacency = topology.adjacency
    finder = landmarks(topology)
    bound, latency_of = finder.bounds_to(dst), finder.latency
    best: dict[str, tuple[float, int]] = {src: (0.0, 0)}
    came: dict[str, tuple[str, Hop]] = {}
    heap: list[tuple[float, int, str]] = [(bound[src], 0, src)]
    done: set[str] = set()
    while heap:
        _, count, node = heapq.heappop(heap)
        if node in done:
            continue
        if node == dst:
            return trace_path(src, dst, came)
        done.add(node)
        latency = best[node][0]
        count += 1
        for hop in adjacency.get(node, ()):
            to = hop.to
            if to in done:
                continue
            grown = (latency + latency_of[hop.link], count)
            old = best.get(to)
            # Room is looked up last: most hops improve nothing, and skip it.
            if (old is None or grown < old) and usable(hop) >= need:
                best[to] = grown
                came[to] = (node, hop)
                heapq.heappush(heap, (grown[0] + bound[to], count, to))
    return None


# Refused requests are mostly blocked close to one end: a search from src
# that is walled in stops soon by itself, but one that cannot get into dst
# would roam the whole network first, so a small search into dst goes first.
_CUT_OFF_NODES = 16


def _cut_off(topology: Topology, src: str, dst: str, usable: Usable, need: int) -> bool:
    """Whether a few nodes around dst, all unreachable from src, wall dst in."""
    # A symmetric window offers the same both ways: no need to turn hops round.
    view = getattr(usable, "__self__", None)
    same_both_ways = bool(getattr(view, "symmetric", False)) and usable == getattr(
        view, "usable", None
    )
    seen = {dst}
    todo = [dst]
    while todo:
        if len(seen) > _CUT_OFF_NODES:
            return False
        node = todo.pop()
        for hop in topology.hops(node):
            if hop.to in seen:
                continue
            into = hop if same_both_ways else Hop(hop.link, node, not hop.forward)
            if usable(into) >= need:
                if hop.to == src:
                    return False
                seen.add(hop.to)
                todo.append(hop.to)
    return True


def widest_path(topology: Topology, src: str, dst: str, usable: Usable) -> tuple[Path, int] | None:
    """The path with the largest bottleneck; among equals, the lowest latency.

    `best_path` with the label (-width, latency) written out, as above.
    """
    links, adjacency = topology.links, topology.adjacency
    best: dict[str, tuple[int, float]] = {src: (-UNBOUNDED, 0.0)}
    came: dict[str, tuple[str, Hop]] = {}
    heap: list[tuple[int, float, str]] = [(-UNBOUNDED, 0.0, src)]
    done: set[str] = set()
    while heap:
        negative, latency, node = heapq.heappop(heap)
        if node in done:
            continue
        if node == dst:
            return trace_path(src, dst, came), -negative
        done.add(node)
        for hop in adjacency.get(node, ()):
            to = hop.to
            if to in done:
                continue
            width = usable(hop)
            if width > -negative:
                width = -negative
            if width <= 0:
                continue
            grown = (-width, latency + links[hop.link].latency_ms)
            old = best.get(to)
            if old is None or grown < old:
                best[to] = grown
                came[to] = (node, hop)
                heapq.heappush(heap, (-width, grown[1], to))
    return None


def walled_in(
    topology: Topology, ends: tuple[str, str], usable: Usable, need: int, *, out: bool = True
) -> list[tuple[Hop, int]] | None:
    """The wall around what `ends[0]` joins over hops with `need` free, or None if `ends[1]` too.

    Joined are the nodes reached from `ends[0]` (`out`) or reaching it
    (not `out`) over hops with `need` free each; the wall is every hop
    leaving them (or entering them), each with less than `need` free, and
    what it has free. Every path between the ends crosses it. None when the
    other end is joined: then some path has `need` free throughout.
    """
    side = _Side(topology, ends, usable, need, out)
    while side.todo:
        if side.grow():
            return None
    return side.wall()


def nearer_wall(
    topology: Topology, ends: tuple[str, str], usable: Usable, need: int
) -> list[tuple[Hop, int]] | None:
    """The wall of `walled_in` around src or dst, whichever is found first.

    Both sides grow a node at a time in turn, so the search costs about
    twice the smaller side: a refused request is mostly walled in close
    to one end, and the other side may be most of the network.
    """
    src, dst = ends
    sides = (
        _Side(topology, (src, dst), usable, need, True),
        _Side(topology, (dst, src), usable, need, False),
    )
    # A node joined to both ends lies on a path with room throughout.
    sides[0].meets, sides[1].meets = sides[1].side, sides[0].side
    while True:
        for side in sides:
            if not side.todo:
                return side.wall()
            if side.grow():
                return None


class _Side:
    """The nodes joined to one end so far, and the hops found lacking room."""

    def __init__(
        self, topology: Topology, ends: tuple[str, str], usable: Usable, need: int, out: bool
    ) -> None:
        self.topology, self.usable, self.need, self.out = topology, usable, need, out
        self.end = ends[0]
        self.side = {self.end}
        self.meets = {ends[1]}  # nodes whose joining means the other end is joined
        self.todo = [self.end]
        self.crossing: list[tuple[Hop, int, str]] = []

    def grow(self) -> bool:
        """Join the nodes one more node reaches with room; True if that takes in the other end."""
        node = self.todo.pop()
        side, need = self.side, self.need
        for hop in self.topology.hops(node):
            if hop.to in side:
                continue
            step = hop if self.out else Hop(hop.link, node, not hop.forward)
            width = self.usable(step)
            if width < need:
                self.crossing.append((step, width, hop.to))
            elif hop.to in self.meets:
                return True
            else:
                side.add(hop.to)
                self.todo.append(hop.to)
        return False

    def wall(self) -> list[tuple[Hop, int]]:
        # A hop to a node joined later is no longer in the wall.
        return [(hop, width) for hop, width, beyond in self.crossing if beyond not in self.side]


def trace_path(src: str, dst: str, came: dict[str, tuple[str, Hop]]) -> Path:
    hops: list[Hop] = []
    node = dst
    while node != src:
        node, hop = came[node]
        hops.append(hop)
    hops.reverse()
    return Path.from_hops(src, hops)
