"""Successive widest paths over the contracted graph, widths kept between searches.

Each search of the greedy sequence finds the widest path on what the earlier
paths left. On the whole topology every search reads every link; here it
runs over the kept nodes and chains of `chains.Contraction` (a chain is as
wide as its narrowest hop), and a chain's width is worked out again only
once a placed path has crossed one of its links.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from braid.core.graph.reach import pair_memo
from braid.core.graph.search import UNBOUNDED
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.chains import Skeleton

Corridor = tuple[Hop, ...]
Room = Callable[[Sequence[Hop]], int]


class _Chains:
    """What greedy searches ask of a pair's skeleton besides its arcs (the topology's alone)."""

    def __init__(self, skeleton: Skeleton, ends: tuple[str, str]) -> None:
        # Kept per topology (`pair_memo`), so it holds no reference to it:
        # the topology stays free to go.
        self.skeleton = skeleton
        self.src, self.dst = skeleton.index[ends[0]], skeleton.index[ends[1]]
        self.src_name = ends[0]
        # Each kept node's place among their names: a search's heap breaks
        # ties by it, as it would by name.
        self.rank = [0] * len(skeleton.kept)
        for place, name in enumerate(sorted(skeleton.kept)):
            self.rank[skeleton.index[name]] = place
        # Latencies are summed when a search first crosses a chain.
        self.latency: list[float | None] = [None] * len(skeleton.chains)

    @staticmethod
    def of(topology: Topology, src: str, dst: str) -> _Chains:
        return pair_memo(
            topology,
            ("greedy chains", src, dst),
            lambda: _Chains(Skeleton.of(topology, (src, dst)), (src, dst)),
        )


class ChainWidths:
    """The chains between kept nodes, with widths read from a changing `usable`.

    Chains are numbered as in the pair's skeleton (a tuple of hops would
    hash in Python per lookup), and so as max flow's widths list them.
    """

    def __init__(
        self, topology: Topology, src: str, dst: str, known: Sequence[int] | None = None
    ) -> None:
        """`known`: the width of every chain in this window, as max flow read them, if it ran.

        A chain without room is of no use to a greedy path either (placing
        paths only takes room away), so the searches pass over it.
        """
        self.topology = topology
        self.chains = _Chains.of(topology, src, dst)
        self.skeleton = skeleton = self.chains.skeleton
        self.widths: list[int | None] = (
            list(known) if known is not None else [None] * len(skeleton.chains)
        )

    def forget(self, hops: tuple[Hop, ...]) -> None:
        """Widths of the chains sharing a link with `hops` must be read again.

        One without room stays so (placing a path only takes room away): it
        is not read again.
        """
        widths = self.widths
        for hop in hops:
            for number in self.skeleton.on_link.get(hop.link, ()):
                width = widths[number]
                if width is not None and width > 0:
                    widths[number] = None

    def widest(self, room: Room) -> tuple[Path, tuple[Hop, ...], int] | None:
        """The widest src -> dst path (ties: lowest latency), as `search.widest_path`,
        with its hops and its width.

        `room` gives what a run of hops can take (the least of their widths).
        """
        chains, skeleton = self.chains, self.skeleton
        src, dst, rank, latencies = chains.src, chains.dst, chains.rank, chains.latency
        # A chain leaving a node is the node's even arc in the skeleton (an
        # odd one is a chain entering it, turned round).
        adj, to, chain_hops = skeleton.arc_adj, skeleton.arc_to, skeleton.chains
        best: list[tuple[int, float] | None] = [None] * len(adj)
        best[src] = (-UNBOUNDED, 0.0)
        came: dict[int, tuple[int, int]] = {}
        heap: list[tuple[int, float, int, int]] = [(-UNBOUNDED, 0.0, rank[src], src)]
        done = [False] * len(adj)
        widths = self.widths
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            negative, latency, _, node = pop(heap)
            if done[node]:
                continue
            if node == dst:
                return (*self._trace(came), -negative)
            done[node] = True
            bound = -negative
            for arc in adj[node]:
                if arc & 1:
                    continue
                head = to[arc]
                if done[head]:
                    continue
                number = arc >> 1
                width = widths[number]
                if width is None:
                    width = widths[number] = room(chain_hops[number][2])
                if width > bound:
                    width = bound
                if width <= 0:
                    continue
                length = latencies[number]
                if length is None:
                    length = latencies[number] = self._latency(number)
                grown = (-width, latency + length)
                old = best[head]
                if old is None or grown < old:
                    best[head] = grown
                    came[head] = (node, number)
                    push(heap, (-width, grown[1], rank[head], head))
        return None

    def _latency(self, number: int) -> float:
        links = self.topology.links
        return sum(links[hop.link].latency_ms for hop in self.skeleton.chains[number][2])

    def _trace(self, came: dict[int, tuple[int, int]]) -> tuple[Path, tuple[Hop, ...]]:
        chains, corridors = self.chains, self.skeleton.chains
        numbers: list[int] = []
        node = chains.dst
        while node != chains.src:
            node, number = came[node]
            numbers.append(number)
        hops = tuple(hop for number in reversed(numbers) for hop in corridors[number][2])
        return Path.from_hops(chains.src_name, hops), hops
