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

from braid.core.graph.reach import pair_memo
from braid.core.graph.search import UNBOUNDED
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.chains import Skeleton

Corridor = tuple[Hop, ...]
Room = Callable[[Sequence[Hop]], int]


class _Chains:
    """A pair's chains as the searches of every window walk them (the topology's alone)."""

    def __init__(self, skeleton: Skeleton) -> None:
        # Kept per topology (`pair_memo`), so it holds no reference to it:
        # the topology stays free to go. Chains are numbered as in the
        # skeleton (a tuple of hops would hash in Python per lookup), and so
        # as max flow's widths list them.
        self.corridors = [hops for _, _, hops in skeleton.chains]
        self.out: dict[str, list[int]] = defaultdict(list)
        for number, (tail, _, _) in enumerate(skeleton.chains):
            self.out[skeleton.kept[tail]].append(number)
        self.ends = [hops[-1].to for hops in self.corridors]
        self.on_link: dict[str, list[int]] = defaultdict(list)
        for number, corridor in enumerate(self.corridors):
            for hop in corridor:
                self.on_link[hop.link].append(number)
        # Latencies are summed when a search first crosses a chain.
        self.latency: list[float | None] = [None] * len(self.corridors)

    @staticmethod
    def of(topology: Topology, src: str, dst: str) -> _Chains:
        return pair_memo(
            topology,
            ("greedy chains", src, dst),
            lambda: _Chains(Skeleton.of(topology, (src, dst))),
        )


class ChainWidths:
    """The chains between kept nodes, with widths read from a changing `usable`."""

    def __init__(
        self, topology: Topology, src: str, dst: str, known: Sequence[int] | None = None
    ) -> None:
        """`known`: the width of every chain in this window, as max flow read them, if it ran.

        A chain without room is of no use to a greedy path either (placing
        paths only takes room away), so the searches pass over it.
        """
        self.topology, self.src, self.dst = topology, src, dst
        chains = _Chains.of(topology, src, dst)
        self.corridors, self.out, self.ends = chains.corridors, chains.out, chains.ends
        self.on_link, self.latency = chains.on_link, chains.latency
        self.widths: list[int | None] = (
            list(known) if known is not None else [None] * len(self.corridors)
        )

    def forget(self, hops: tuple[Hop, ...]) -> None:
        """Widths of the chains sharing a link with `hops` must be read again.

        One without room stays so (placing a path only takes room away): it
        is not read again.
        """
        widths = self.widths
        for hop in hops:
            for number in self.on_link.get(hop.link, ()):
                width = widths[number]
                if width is not None and width > 0:
                    widths[number] = None

    def widest(self, room: Room) -> tuple[Path, int] | None:
        """The widest src -> dst path (ties: lowest latency), as `search.widest_path`.

        `room` gives what a run of hops can take (the least of their widths).
        """
        best: dict[str, tuple[int, float]] = {self.src: (-UNBOUNDED, 0.0)}
        came: dict[str, tuple[str, int]] = {}
        heap: list[tuple[int, float, str]] = [(-UNBOUNDED, 0.0, self.src)]
        done: set[str] = set()
        widths, ends, latencies = self.widths, self.ends, self.latency
        out, corridors, dst = self.out, self.corridors, self.dst
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            negative, latency, node = pop(heap)
            if node in done:
                continue
            if node == dst:
                return self._trace(came), -negative
            done.add(node)
            bound = -negative
            for number in out.get(node, ()):
                to = ends[number]
                if to in done:
                    continue
                width = widths[number]
                if width is None:
                    width = widths[number] = room(corridors[number])
                if width > bound:
                    width = bound
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
                    push(heap, (-width, grown[1], to))
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
