"""Successive widest paths over the contracted graph, widths kept between searches.

Each search of the greedy sequence finds the widest path on what the earlier
paths left. On the whole topology every search reads every link; here it
runs over the kept nodes and chains of `chains.Contraction` (a chain is as
wide as its narrowest hop), and a chain's width is worked out again only
once a placed path has crossed one of its links.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Sequence

from braid.core.graph.search import UNBOUNDED
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.chains import Chain, Contraction

Corridor = tuple[Hop, ...]
Room = Callable[[Sequence[Hop]], int]


class ChainWidths:
    """The chains between kept nodes, with widths read from a changing `usable`."""

    def __init__(
        self, topology: Topology, src: str, dst: str, known: Sequence[Chain] | None = None
    ) -> None:
        """`known`: the chains with room a max flow of the same window found, if any.

        Chains without room are of no use to a greedy path either (placing
        paths only takes room away), so those chains are all that is needed.
        """
        self.topology, self.src, self.dst = topology, src, dst
        # Chains are numbered: a tuple of hops would hash in Python per lookup.
        self.corridors: list[Corridor] = []
        self.out: dict[str, list[int]] = defaultdict(list)
        if known is not None:
            for chain in known:
                self.out[chain.tail].append(len(self.corridors))
                self.corridors.append(chain.hops)
        else:
            contraction = Contraction(topology, (src, dst))
            for node in contraction.kept:
                for corridor in contraction.corridors(node):
                    self.out[node].append(len(self.corridors))
                    self.corridors.append(corridor)
        # Latencies are summed when a search first crosses a chain.
        self.latency: list[float | None] = [None] * len(self.corridors)
        self.ends = [c[-1].to for c in self.corridors]
        self.on_link: dict[str, list[int]] = defaultdict(list)
        for number, corridor in enumerate(self.corridors):
            for hop in corridor:
                self.on_link[hop.link].append(number)
        self.widths: list[int | None] = (
            [chain.width for chain in known] if known is not None else [None] * len(self.corridors)
        )

    def forget(self, hops: tuple[Hop, ...]) -> None:
        """Widths of the chains sharing a link with `hops` must be read again."""
        for hop in hops:
            for number in self.on_link.get(hop.link, ()):
                self.widths[number] = None

    def widest(self, room: Room) -> tuple[Path, int] | None:
        """The widest src -> dst path (ties: lowest latency), as `search.widest_path`.

        `room` gives what a run of hops can take (the least of their widths).
        """
        best: dict[str, tuple[int, float]] = {self.src: (-UNBOUNDED, 0.0)}
        came: dict[str, tuple[str, int]] = {}
        heap: list[tuple[int, float, str]] = [(-UNBOUNDED, 0.0, self.src)]
        done: set[str] = set()
        widths, ends, latencies = self.widths, self.ends, self.latency
        while heap:
            negative, latency, node = heapq.heappop(heap)
            if node in done:
                continue
            if node == self.dst:
                return self._trace(came), -negative
            done.add(node)
            for number in self.out.get(node, ()):
                to = ends[number]
                if to in done:
                    continue
                width = widths[number]
                if width is None:
                    width = widths[number] = room(self.corridors[number])
                width = min(width, -negative)
                if width <= 0:
                    continue
                length = latencies[number]
                if length is None:
                    length = latencies[number] = self._latency(number)
                grown = (-width, latency + length)
                old = best.get(to)
                if old is None or grown < old:
                    best[to] = grown
                    came[to] = (node, number)
                    heapq.heappush(heap, (-width, grown[1], to))
        return None

    def _latency(self, number: int) -> float:
        links = self.topology.links
        return sum(links[hop.link].latency_ms for hop in self.corridors[number])

    def _trace(self, came: dict[str, tuple[str, int]]) -> Path:
        numbers: list[int] = []
        node = self.dst
        while node != self.src:
            node, number = came[node]
            numbers.append(number)
        hops = [hop for number in reversed(numbers) for hop in self.corridors[number]]
        return Path.from_hops(self.src, hops)
