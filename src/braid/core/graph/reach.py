"""Which nodes a simple path between two nodes can visit, and hop counts from a node.

A node left after repeatedly removing nodes with at most one neighbour (the
2-core), or on the way from one of the two ends into it, is the only kind a
simple path between the ends can visit: any other node hangs in a tree that
is entered and left through the same node. Searches skip the rest; national
networks have many such stubs (about half of ESnet's nodes are leaves).
Both are static, so they are computed once per topology.
"""

from __future__ import annotations

import heapq
import weakref
from collections import deque
from collections.abc import Callable, Collection, Container, Hashable, Mapping, Sequence
from typing import Any, TypeVar, cast

from braid.core.model.topology import Hop, Topology
from braid.core.model.units import UNBOUNDED

_T = TypeVar("_T")

# Hop counts, and static widths, from at most this many sources are kept
# (afresh when full).
RECENT_SOURCES = 256
# The relevant nodes of at most this many pairs are kept (afresh when full).
RECENT_PAIRS = 4096
# Larger structures of at most this many pairs (`pair_memo`; a pair's
# contracted graph for max flow is some kilobytes).
RECENT_STRUCTURES = 512


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
        self.widths: dict[str, dict[str, int]] = {}
        self.kept: dict[tuple[str, str], Container[str]] = {}
        self.pairs: dict[Hashable, Any] = {}
        # The hop leaving a node over a link towards a node, by all three:
        # frozen Hops are slow to build, and paths are turned into hops often.
        self.hop_of: dict[tuple[str, str, str], Hop] = {}
        for link in topology.links.values():
            self.hop_of[(link.a, link.id, link.b)] = Hop(link.id, link.b, True)
            if link.a != link.b:
                self.hop_of[(link.b, link.id, link.a)] = Hop(link.id, link.a, False)
        self.nodes = topology.nodes
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


def pair_memo(topology: Topology, key: Hashable, make: Callable[[], _T]) -> _T:
    """What `make` derives from the topology and one pair alone, kept (afresh when full).

    For structures a query between two nodes walks the same way whatever is
    booked; `key` names both the structure and the pair.
    """
    memo = _static(topology).pairs
    found = memo.get(key)
    if found is None:
        if len(memo) >= RECENT_STRUCTURES:
            memo.clear()  # simple, and safe if threads share it
        found = memo[key] = make()
    return cast("_T", found)


def hop_table(topology: Topology) -> Mapping[tuple[str, str, str], Hop]:
    """Every hop by (node it leaves, link, node it reaches); do not modify the result."""
    return _static(topology).hop_of


def core_of(topology: Topology) -> _Static:
    """The static reductions of `topology` (computed once)."""
    return _static(topology)


def static_width(topology: Topology, src: str, dst: str) -> int:
    """The widest bottleneck between two nodes with nothing booked (0 if unconnected).

    No request wider than this ever fits one path, whatever the window. A
    link carries its capacity both ways, so the widths from either end serve.
    """
    widths = _static(topology).widths
    found = widths.get(src)
    if found is None:
        found = widths.get(dst)
        if found is not None:
            return found.get(src, 0)
        if len(widths) >= RECENT_SOURCES:
            widths.clear()  # simple, and safe if threads share it
        found = widths[src] = _widths_from(topology, src)
    return found.get(dst, 0)


def _widths_from(topology: Topology, src: str) -> dict[str, int]:
    """The widest bottleneck from src to every node it reaches over links with capacity."""
    links = topology.links
    width = {src: UNBOUNDED}
    heap = [(-UNBOUNDED, src)]
    done: dict[str, int] = {}
    while heap:
        negative, node = heapq.heappop(heap)
        if node in done:
            continue
        done[node] = -negative
        for hop in topology.hops(node):
            grown = min(-negative, links[hop.link].capacity)
            if grown > width.get(hop.to, 0):
                width[hop.to] = grown
                heapq.heappush(heap, (-grown, hop.to))
    return done


def relevant_nodes(topology: Topology, ends: Collection[str]) -> set[str] | None:
    """Nodes some simple path between `ends` may visit; None when that may be any node."""
    return _static(topology).relevant(ends)


def relevant_between(topology: Topology, src: str, dst: str) -> Container[str]:
    """`relevant_nodes` of two ends, kept for the pair (every node if all may be visited).

    Searches between the ends skip the other nodes: none is on a simple path
    between them, nor improves one. Do not modify the result.
    """
    static = _static(topology)
    key = (src, dst)
    found = static.kept.get(key)
    if found is None:
        if len(static.kept) >= RECENT_PAIRS:
            static.kept.clear()  # simple, and safe if threads share it
        relevant = static.relevant(key)
        found = static.kept[key] = static.nodes if relevant is None else frozenset(relevant)
    return found


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
