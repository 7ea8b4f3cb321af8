"""Lower bounds on the latency to any node, from a few landmarks (ALT heuristic).

For a landmark L, the triangle inequality gives dist(v, t) >= |d(L, t) - d(L, v)|
on an undirected graph; the maximum over several landmarks is an admissible
and consistent A* heuristic. Removing links (those without room for a
request) only lengthens paths, so bounds from the whole topology stay valid
for every window. Computed once per topology and kept while it lives.
"""

from __future__ import annotations

import heapq
import math
import weakref
from collections.abc import Sequence
from typing import Any

from braid.core.model.topology import Topology

# Enough landmarks to bound well from most directions on a national network;
# each costs one Dijkstra over the topology, once.
LANDMARKS = 12
# Bounds towards at most this many targets are kept (a few MB on 1,000 nodes);
# the cache starts afresh when full.
RECENT_TARGETS = 128
# Above this many nodes the bounds are computed with numpy.
NUMPY_NODES = 300

_cache: dict[int, tuple[weakref.ref[Topology], Landmarks]] = {}


class Landmarks:
    """Latency from each landmark to every node (one row per landmark)."""

    def __init__(self, topology: Topology) -> None:
        self.nodes: tuple[str, ...] = tuple(topology.nodes)
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self.rows = _choose(topology, self.nodes, self.index)
        self.latency = {key: link.latency_ms for key, link in topology.links.items()}
        self._matrix: Any = None
        self._recent: dict[str, dict[str, float]] = {}

    def bounds_to(self, target: str) -> dict[str, float]:
        """A lower bound on the latency from every node to `target`; inf if unreachable."""
        found = self._recent.get(target)
        if found is None:
            if len(self._recent) >= RECENT_TARGETS:
                self._recent.clear()  # simple, and safe if threads share it
            if len(self.nodes) > NUMPY_NODES:
                found = self._bounds_numpy(target)
            else:
                found = self._bounds_python(target)
            self._recent[target] = found
        return found

    def _bounds_python(self, target: str) -> dict[str, float]:
        column = self.index[target]
        bounds = dict.fromkeys(self.nodes, 0.0)
        for row in self.rows:
            here = row[column]
            for node, there in zip(self.nodes, row, strict=True):
                if here == there:
                    continue  # equal, or both unreachable (no information)
                gap = abs(here - there)
                if gap > bounds[node]:
                    bounds[node] = gap
        return bounds

    def _bounds_numpy(self, target: str) -> dict[str, float]:
        import numpy as np  # only large networks need it

        if self._matrix is None:
            self._matrix = np.array(self.rows, dtype=np.float64)
        matrix = self._matrix
        column = matrix[:, self.index[target]]
        with np.errstate(invalid="ignore"):
            gaps = np.abs(matrix - column[:, None])
        # inf - inf (landmark in neither component) is nan: no information.
        bound = np.fmax.reduce(gaps, axis=0)
        bound = np.nan_to_num(bound, nan=0.0, posinf=math.inf)
        return dict(zip(self.nodes, bound.tolist(), strict=True))


def landmarks(topology: Topology) -> Landmarks:
    """The landmarks of `topology`, computed on first use."""
    key = id(topology)
    entry = _cache.get(key)
    if entry is not None and entry[0]() is topology:
        return entry[1]
    found = Landmarks(topology)
    _cache[key] = (weakref.ref(topology, lambda _ref: _cache.pop(key, None)), found)
    return found


def _choose(topology: Topology, nodes: Sequence[str], index: dict[str, int]) -> list[list[float]]:
    """Farthest-point landmarks: each new one is the node farthest from those chosen.

    Unreachable nodes count as farthest, so every component gets a landmark.
    """
    rows: list[list[float]] = []
    nearest = [math.inf] * len(nodes)
    pick = 0
    for _ in range(min(LANDMARKS, len(nodes))):
        row = _distances(topology, nodes[pick], index)
        rows.append(row)
        nearest = [min(a, b) for a, b in zip(nearest, row, strict=True)]
        pick = max(range(len(nodes)), key=lambda i: (nearest[i], -i))
        if nearest[pick] == 0.0:
            break
    return rows


def _distances(topology: Topology, source: str, index: dict[str, int]) -> list[float]:
    distance = [math.inf] * len(index)
    distance[index[source]] = 0.0
    heap = [(0.0, source)]
    while heap:
        here, node = heapq.heappop(heap)
        if here > distance[index[node]]:
            continue
        for hop in topology.hops(node):
            there = here + topology.links[hop.link].latency_ms
            j = index[hop.to]
            if there < distance[j]:
                distance[j] = there
                heapq.heappush(heap, (there, hop.to))
    return distance
