"""Which nodes a simple path between two nodes can visit, and hop counts from a node.

A node left after repeatedly removing nodes with at most one neighbour (the
2-core), or on the way from one of the two ends into it, is the only kind a
simple path between the ends can visit: any other node hangs in a tree that
is entered and left through the same node. Searches skip the rest; national
networks have many such stubs (about half of ESnet's nodes are leaves).
Both are static, so they are computed once per topology.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Collection, Sequence

from braid.core.search import widest_path
from braid.core.topology import Hop, Topology

# Hop counts from at most this many sources are kept (afresh when full).
RECENT_SOURCES = 256
# Static widths of at most this many pairs are kept (afresh when full).
RECENT_PAIRS = 4096


class _Static:
    """The 2-core of a topology, for every other node its way towards it, hop counts."""

    def __init__(self, topology: Topology) -> None:
        neighbours = {
            node: {hop.to for hop in topology.hops(node) if hop.to != node}
            for node in topology.nodes
        }
        alive = {node: len(near) for node, near in neighbours.items()}
        self.parent: dict[str, str] = {}
        removed: set[str] = set()
        todo = [node for node, count in alive.items() if count <= 1]
        while todo:
            node = todo.pop()
            if node in removed:
                continue
            removed.add(node)
            for near in neighbours[node]:
                if near not in removed:
                    self.parent[node] = near
                    alive[near] -= 1
                    if alive[near] <= 1:
                        todo.append(near)
        self.removed = frozenset(removed)
        self.core = frozenset(topology.nodes) - self.removed
        self.ranks: dict[str, dict[str, int]] = {}
        self.widths: dict[tuple[str, str], int] = {}
        self.order = tuple(topology.nodes)
        # Within the core alone: each node's hops, and the nodes that are
        # more than a pass-through between two others.
        self.core_hops: dict[str, tuple[Hop, ...]] = {
            node: tuple(hop for hop in topology.hops(node) if hop.to in self.core)
            for node in self.core
        }
        self.core_kept = frozenset(
            node for node, hops in self.core_hops.items() if not passes_through(node, hops)
        )

    def relevant(self, ends: Collection[str]) -> set[str] | None:
        """Nodes some simple path between `ends` may visit; None when that is all of them."""
        if not self.removed:
            return None
        keep = set(self.core)
        for node in ends:
            at: str | None = node
            while at is not None and at not in keep:
                keep.add(at)
                at = self.parent.get(at)
        return keep


_cache: dict[int, tuple[weakref.ref[Topology], _Static]] = {}


def _static(topology: Topology) -> _Static:
    key = id(topology)
    entry = _cache.get(key)
    if entry is not None and entry[0]() is topology:
        return entry[1]
    found = _Static(topology)
    _cache[key] = (weakref.ref(topology, lambda _ref: _cache.pop(key, None)), found)
    return found


def passes_through(node: str, hops: Sequence[Hop]) -> bool:
    """Whether `node`, with these hops, only joins two other nodes."""
    return len(hops) == 2 and hops[0].to != hops[1].to and node not in (h.to for h in hops)


def core_of(topology: Topology) -> _Static:
    """The static reductions of `topology` (computed once)."""
    return _static(topology)


def static_width(topology: Topology, src: str, dst: str) -> int:
    """The widest bottleneck between two nodes with nothing booked (0 if unconnected).

    No request wider than this ever fits one path, whatever the window.
    """
    static = _static(topology)
    key = (src, dst)
    found = static.widths.get(key)
    if found is None:
        if len(static.widths) >= RECENT_PAIRS:
            static.widths.clear()  # simple, and safe if threads share it
        links = topology.links
        best = widest_path(topology, src, dst, lambda hop: links[hop.link].capacity)
        found = static.widths[key] = 0 if best is None else best[1]
    return found


def relevant_nodes(topology: Topology, ends: Collection[str]) -> set[str] | None:
    """Nodes some simple path between `ends` may visit; None when that may be any node."""
    return _static(topology).relevant(ends)


def hop_counts(topology: Topology, src: str) -> dict[str, int]:
    """Hops from src to every node it reaches (BFS); do not modify the result."""
    static = _static(topology)
    found = static.ranks.get(src)
    if found is None:
        if len(static.ranks) >= RECENT_SOURCES:
            static.ranks.clear()
        found = static.ranks[src] = _bfs(topology, src)
    return found


def _bfs(topology: Topology, src: str) -> dict[str, int]:
    rank = {src: 0}
    todo = deque([src])
    while todo:
        node = todo.popleft()
        for hop in topology.hops(node):
            if hop.to not in rank:
                rank[hop.to] = rank[node] + 1
                todo.append(hop.to)
    return rank
