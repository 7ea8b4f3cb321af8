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

    def __init__(self, topology: Topology, skeleton: Skeleton, ends: tuple[str, str]) -> None:
        # Kept per topology (`pair_memo`), so it holds no reference to it:
        # the topology stays free to go. Chains are numbered as in the
        # skeleton (a tuple of hops would hash in Python per lookup), and so
        # as max flow's widths list them. Nodes are numbered in the order of
        # their names: a search's heap breaks ties by node, as on names.
        kept = skeleton.kept
        self.names = sorted(kept)
        number_of = {name: number for number, name in enumerate(self.names)}
        self.src, self.dst = number_of[ends[0]], number_of[ends[1]]
        self.corridors = [hops for _, _, hops in skeleton.chains]
        links = topology.links
        # Summed once per pair: the searches of each window cross most chains.
        self.latency = [
            sum([links[hop.link].latency_ms for hop in hops]) for hops in self.corridors
        ]
        self.out: list[list[int]] = [[] for _ in kept]
        for number, (tail, _, _) in enumerate(skeleton.chains):
            self.out[number_of[kept[tail]]].append(number)
        self.ends = [number_of[kept[head]] for _, head, _ in skeleton.chains]
        self.on_link: dict[str, list[int]] = defaultdict(list)
        for number, corridor in enumerate(self.corridors):
            for hop in corridor:
                self.on_link[hop.link].append(number)

    @staticmethod
    def of(topology: Topology, src: str, dst: str) -> _Chains:
        return pair_memo(
            topology,
            ("greedy chains", src, dst),
            lambda: _Chains(topology, Skeleton.of(topology, (src, dst)), (src, dst)),
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
        self.chains = chains = _Chains.of(topology, src, dst)
        self.corridors, self.on_link = chains.corridors, chains.on_link
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

    def widest(self, room: Room) -> tuple[Path, tuple[Hop, ...], int] | None:
        """The widest src -> dst path (ties: lowest latency), as `search.widest_path`,
        with its hops and its width.

        `room` gives what a run of hops can take (the least of their widths).
        """
        chains = self.chains
        src, dst, out, ends, latencies = (
            chains.src,
            chains.dst,
            chains.out,
            chains.ends,
            chains.latency,
        )
        best: list[tuple[int, float] | None] = [None] * len(out)
        best[src] = (-UNBOUNDED, 0.0)
        came: dict[int, tuple[int, int]] = {}
        heap: list[tuple[int, float, int]] = [(-UNBOUNDED, 0.0, src)]
        done = [False] * len(out)
        widths, corridors = self.widths, self.corridors
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            negative, latency, node = pop(heap)
            if done[node]:
                continue
            if node == dst:
                return (*self._trace(came), -negative)
            done[node] = True
            bound = -negative
            for number in out[node]:
                to = ends[number]
                if done[to]:
                    continue
                width = widths[number]
                if width is None:
                    width = widths[number] = room(corridors[number])
                if width > bound:
                    width = bound
                if width <= 0:
                    continue
                grown = (-width, latency + latencies[number])
                old = best[to]
                if old is None or grown < old:
                    best[to] = grown
                    came[to] = (node, number)
                    push(heap, (-width, grown[1], to))
        return None

    def _trace(self, came: dict[int, tuple[int, int]]) -> tuple[Path, tuple[Hop, ...]]:
        chains = self.chains
        numbers: list[int] = []
        node = chains.dst
        while node != chains.src:
            node, number = came[node]
            numbers.append(number)
        hops = tuple(hop for number in reversed(numbers) for hop in self.corridors[number])
        return Path.from_hops(chains.names[chains.src], hops), hops
