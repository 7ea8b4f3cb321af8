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

from braid.core.graph.landmarks import landmarks
from braid.core.graph.reach import relevant_between
from braid.core.graph.sides import Usable, remember_side, same_both_ways
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.model.units import UNBOUNDED

__all__ = [
    "UNBOUNDED",
    "Usable",
    "best_path",
    "shortest_feasible_path",
    "widest_path",
    "widest_width",
]

Label = tuple[Any, ...]
# How a label grows over one hop; None when the hop cannot be taken.
Extend = Callable[[Label, Hop], Label | None]


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
    if src != dst:
        walled = _cut_off(topology, src, dst, usable, need)
        if walled is not None:
            remember_side(usable, (dst, src), need, False, walled)
            return None
    adjacency, relevant = topology.adjacency, relevant_between(topology, src, dst)
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
            if to in done or to not in relevant:
                continue
            grown = (latency + latency_of[hop.link], count)
            old = best.get(to)
            # Room is looked up last: most hops improve nothing, and skip it.
            if (old is None or grown < old) and usable(hop) >= need:
                best[to] = grown
                came[to] = (node, hop)
                heapq.heappush(heap, (grown[0] + bound[to], count, to))
    # Every node src reaches with room was taken (of those a simple path to
    # dst may visit): a wall surrounds them.
    remember_side(usable, (src, dst), need, True, done)
    return None


# Refused requests are mostly blocked close to one end: a search from src
# that is walled in stops soon by itself, but one that cannot get into dst
# would roam the whole network first, so a small search into dst goes first.
_CUT_OFF_NODES = 16


def _cut_off(topology: Topology, src: str, dst: str, usable: Usable, need: int) -> set[str] | None:
    """The few nodes around dst, all unreachable from src, that reach dst with room, if any.

    None when they are more than a few, or src is among them.
    """
    # A symmetric window offers the same both ways: no need to turn hops round.
    turn = not same_both_ways(usable)
    relevant = relevant_between(topology, src, dst)
    seen = {dst}
    todo = [dst]
    while todo:
        if len(seen) > _CUT_OFF_NODES:
            return None
        node = todo.pop()
        for hop in topology.hops(node):
            if hop.to in seen or hop.to not in relevant:
                continue
            into = Hop(hop.link, node, not hop.forward) if turn else hop
            if usable(into) >= need:
                if hop.to == src:
                    return None
                seen.add(hop.to)
                todo.append(hop.to)
    return seen


def widest_path(
    topology: Topology, src: str, dst: str, usable: Usable, *, skip_dead_ends: bool = True
) -> tuple[Path, int] | None:
    """The path with the largest bottleneck; among equals, the lowest latency.

    `best_path` with the label (-width, latency) written out, as above.
    Dead ends (see `reach`) are skipped unless `skip_dead_ends` is False, as
    it must be on a topology whose hops do not all go both ways.
    """
    links, adjacency = topology.links, topology.adjacency
    relevant = relevant_between(topology, src, dst) if skip_dead_ends else topology.nodes
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
            if to in done or to not in relevant:
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


def widest_width(topology: Topology, src: str, dst: str, usable: Usable) -> int:
    """The bottleneck of `widest_path` alone (0 if no path has room): no path is traced.

    The largest bottleneck is one number however ties between paths fall, so
    the label is the width alone.
    """
    adjacency = topology.adjacency
    relevant = relevant_between(topology, src, dst)
    best: dict[str, int] = {src: UNBOUNDED}
    heap: list[tuple[int, str]] = [(-UNBOUNDED, src)]
    done: set[str] = set()
    while heap:
        negative, node = heapq.heappop(heap)
        if node == dst:
            return -negative
        if node in done:
            continue
        done.add(node)
        for hop in adjacency.get(node, ()):
            to = hop.to
            if to in done or to not in relevant:
                continue
            width = usable(hop)
            if width > -negative:
                width = -negative
            if width > best.get(to, 0):
                best[to] = width
                heapq.heappush(heap, (-width, to))
    return 0


def trace_path(src: str, dst: str, came: dict[str, tuple[str, Hop]]) -> Path:
    hops: list[Hop] = []
    node = dst
    while node != src:
        node, hop = came[node]
        hops.append(hop)
    hops.reverse()
    return Path.from_hops(src, hops)
