"""The part of a network a flow between two nodes can use, with chains contracted.

Two reductions keep Dinic's graph small while its max flow and cuts stay
exact:

- Dead ends go (see `reach.relevant_nodes`): no simple src -> dst path, so
  no flow, enters a tree hanging off the rest of the network.
- Chains contract: a node with exactly two neighbours only passes flow from
  one to the other, so a chain of them carries at most its narrowest hop, in
  either direction, and whatever it carries crosses every hop of it.

Most nodes of national networks are leaves or sit on such chains.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import NamedTuple

from braid.core.graph.reach import core_of, pair_memo, passes_through, relevant_nodes
from braid.core.model.topology import Hop, Topology

Usable = Callable[[Hop], int]


class Chain(NamedTuple):
    """One direction of a chain: its hops in order, what each can take, and its width."""

    tail: str
    head: str
    hops: tuple[Hop, ...]
    widths: tuple[int, ...]
    width: int  # the narrowest of `widths`


class Contraction:
    """The nodes kept for a flow between `ends`, and the chains that join them.

    What the core looks like is worked out once per topology (`reach`); only
    the ends, their ways into the core and where those join it are looked
    at per query.
    """

    def __init__(self, topology: Topology, ends: Collection[str]) -> None:
        self.topology = topology
        static = core_of(topology)
        self._core_hops = static.core_hops
        self.relevant = relevant_nodes(topology, ends)
        branch = set() if self.relevant is None else self.relevant - static.core
        joins = {static.parent[node] for node in branch if node in static.parent}
        self._special = branch | joins | set(ends)
        self._hops: dict[str, list[Hop]] = {}
        keep = {node for node in self._special if node in ends or not self._passes(node)}
        self.kept = [
            node
            for node in static.order
            if node in keep or (node not in self._special and node in static.core_kept)
        ]
        self._kept = set(self.kept)

    def hops(self, node: str) -> Sequence[Hop]:
        """Hops out of `node` that stay among the relevant nodes."""
        if node not in self._special:
            return self._core_hops[node]
        found = self._hops.get(node)
        if found is None:
            relevant = self.relevant
            hops = self.topology.hops(node)
            found = [hop for hop in hops if relevant is None or hop.to in relevant]
            self._hops[node] = found
        return found

    def _passes(self, node: str) -> bool:
        return passes_through(node, self.hops(node))

    def chains_from(self, node: str, usable: Usable) -> list[Chain]:
        """Every chain leaving kept `node` with room on all its hops (loops back are dropped).

        Max flow reads these from the pair's `Skeleton` instead; this is the
        definition the skeleton is tested against.
        """
        out = []
        for first in self.hops(node):
            hops, widths = [first], [usable(first)]
            here = first
            while widths[-1] > 0 and here.to not in self._kept:
                onward = self.hops(here.to)
                here = onward[1] if onward[0].link == here.link else onward[0]
                hops.append(here)
                widths.append(usable(here))
            if widths[-1] > 0 and here.to != node:
                out.append(Chain(node, here.to, tuple(hops), tuple(widths), min(widths)))
        return out

    def corridors(self, node: str, *, loops: bool = False) -> list[tuple[Hop, ...]]:
        """The hops of every chain leaving kept `node`, whatever they can take.

        With `loops`, chains that come back to `node` are listed too.
        """
        out = []
        for first in self.hops(node):
            hops = [first]
            here = first
            while here.to not in self._kept:
                onward = self.hops(here.to)
                here = onward[1] if onward[0].link == here.link else onward[0]
                hops.append(here)
            if loops or here.to != node:
                out.append(tuple(hops))
        return out


class Skeleton:
    """A pair's `Contraction` with every chain between kept nodes walked once.

    Which hops form which chain does not depend on what is booked, only on
    the topology and the ends: a max flow in each window reads their widths
    and keeps those with room on every hop, which is what `chains_from`
    gives, in the same order (so arcs are numbered alike).
    """

    def __init__(self, topology: Topology, ends: tuple[str, str]) -> None:
        # Kept per topology, so it holds no reference to it (nor to its
        # `Contraction`): the topology stays free to go.
        contraction = Contraction(topology, ends)
        self.kept = contraction.kept
        relevant = topology.nodes if contraction.relevant is None else contraction.relevant
        # `Contraction.hops` of every node a path between the ends may visit.
        self.hops = {node: contraction.hops(node) for node in relevant}
        self.index = {node: i for i, node in enumerate(self.kept)}
        # (tail, head) by index, and the hops; chains back to their tail are left out.
        self.chains: list[tuple[int, int, tuple[Hop, ...]]] = []
        # Per kept node, every chain leaving it, loops included (for cuts).
        self.corridors: dict[str, list[tuple[Hop, ...]]] = {}
        for node in self.kept:
            found = self.corridors[node] = contraction.corridors(node, loops=True)
            tail = self.index[node]
            for hops in found:
                head = hops[-1].to
                if head != node:
                    self.chains.append((tail, self.index[head], hops))
        # The link ids of each chain, and one hop per link any chain crosses:
        # what a symmetric window reads by link (`WindowView.by_link`).
        self.links = [tuple(hop.link for hop in hops) for _, _, hops in self.chains]
        firsts = {hop.link: hop for _, _, hops in self.chains for hop in hops}
        self.reads = tuple(firsts.values())

    @staticmethod
    def of(topology: Topology, ends: tuple[str, str]) -> Skeleton:
        """The skeleton of `ends`, kept for the pair."""
        return pair_memo(topology, ("skeleton", *ends), lambda: Skeleton(topology, ends))
