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
    """The lowest-latency path whose every hop has at least `need` free."""

    def extend(label: Label, hop: Hop) -> Label | None:
        if usable(hop) < need:
            return None
        return (label[0] + topology.links[hop.link].latency_ms, label[1] + 1)

    found = best_path(topology, src, dst, (0.0, 0), extend)
    return None if found is None else found[0]


def widest_path(topology: Topology, src: str, dst: str, usable: Usable) -> tuple[Path, int] | None:
    """The path with the largest bottleneck; among equals, the lowest latency."""

    def extend(label: Label, hop: Hop) -> Label | None:
        width = min(-label[0], usable(hop))
        if width <= 0:
            return None
        return (-width, label[1] + topology.links[hop.link].latency_ms)

    found = best_path(topology, src, dst, (-UNBOUNDED, 0.0), extend)
    return None if found is None else (found[0], -found[1][0])


def trace_path(src: str, dst: str, came: dict[str, tuple[str, Hop]]) -> Path:
    hops: list[Hop] = []
    node = dst
    while node != src:
        node, hop = came[node]
        hops.append(hop)
    hops.reverse()
    return Path.from_hops(src, hops)
