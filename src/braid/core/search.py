"""Single-path searches over the free capacity of a window."""

from __future__ import annotations

import heapq
from collections.abc import Callable

from braid.core.paths import Path
from braid.core.topology import Hop, Topology

Usable = Callable[[Hop], int]


def shortest_feasible_path(
    topology: Topology, src: str, dst: str, usable: Usable, need: int
) -> Path | None:
    """The lowest-latency path whose every hop has at least `need` free (Dijkstra)."""
    best: dict[str, tuple[float, int]] = {src: (0.0, 0)}
    came: dict[str, tuple[str, Hop]] = {}
    heap: list[tuple[float, int, str]] = [(0.0, 0, src)]
    done: set[str] = set()
    while heap:
        latency, count, node = heapq.heappop(heap)
        if node in done:
            continue
        if node == dst:
            return trace_path(src, dst, came)
        done.add(node)
        for hop in topology.hops(node):
            if hop.to in done or usable(hop) < need:
                continue
            key = (latency + topology.links[hop.link].latency_ms, count + 1)
            if hop.to not in best or key < best[hop.to]:
                best[hop.to] = key
                came[hop.to] = (node, hop)
                heapq.heappush(heap, (key[0], key[1], hop.to))
    return None


def widest_path(topology: Topology, src: str, dst: str, usable: Usable) -> tuple[Path, int] | None:
    """The path with the largest bottleneck; among equals, the lowest latency."""
    best: dict[str, tuple[int, float]] = {src: (-(1 << 80), 0.0)}
    came: dict[str, tuple[str, Hop]] = {}
    heap: list[tuple[int, float, str]] = [(-(1 << 80), 0.0, src)]
    done: set[str] = set()
    while heap:
        neg_width, latency, node = heapq.heappop(heap)
        if node in done:
            continue
        if node == dst:
            return trace_path(src, dst, came), -neg_width
        done.add(node)
        for hop in topology.hops(node):
            if hop.to in done:
                continue
            width = min(-neg_width, usable(hop))
            if width <= 0:
                continue
            key = (-width, latency + topology.links[hop.link].latency_ms)
            if hop.to not in best or key < best[hop.to]:
                best[hop.to] = key
                came[hop.to] = (node, hop)
                heapq.heappush(heap, (key[0], key[1], hop.to))
    return None


def trace_path(src: str, dst: str, came: dict[str, tuple[str, Hop]]) -> Path:
    hops: list[Hop] = []
    node = dst
    while node != src:
        node, hop = came[node]
        hops.append(hop)
    hops.reverse()
    return Path.from_hops(src, hops)
