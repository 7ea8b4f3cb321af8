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

from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, NamedTuple

from braid.core.graph.reach import core_of, pair_memo, passes_through, relevant_nodes
from braid.core.model.topology import Hop, Topology

if TYPE_CHECKING:
    from braid.core.model.timeline import Ints

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
        self.core_hops = static.core_hops
        self.relevant = relevant_nodes(topology, ends)
        branch = set() if self.relevant is None else self.relevant - static.core
        joins = {static.parent[node] for node in branch if node in static.parent}
        self.special = branch | joins | set(ends)
        self._hops: dict[str, list[Hop]] = {}
        keep = {node for node in self.special if node in ends or not self._passes(node)}
        self.kept = [
            node
            for node in static.order
            if node in keep or (node not in self.special and node in static.core_kept)
        ]
        self.kept_set = set(self.kept)

    def hops(self, node: str) -> Sequence[Hop]:
        """Hops out of `node` that stay among the relevant nodes."""
        if node not in self.special:
            return self.core_hops[node]
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
            while widths[-1] > 0 and here.to not in self.kept_set:
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
            while here.to not in self.kept_set:
                onward = self.hops(here.to)
                here = onward[1] if onward[0].link == here.link else onward[0]
                hops.append(here)
            if loops or here.to != node:
                out.append(tuple(hops))
        return out


class Skeleton:
    """A pair's `Contraction` with every chain between kept nodes walked once.

    Which hops form which chain does not depend on what is booked, only on
    the topology and the ends: a max flow in each window only reads their
    widths. Those with room on every hop are what `chains_from` gives, in
    the same order.
    """

    def __init__(self, topology: Topology, ends: tuple[str, str]) -> None:
        # Kept per topology, so it holds no reference to it (nor to its
        # `Contraction`): the topology stays free to go.
        contraction = Contraction(topology, ends)
        kept = self.kept = contraction.kept
        # `Contraction.hops` of every node a path between the ends may visit:
        # the core's own hops, but for the pair's special nodes (the relevant
        # nodes outside the core are all special).
        hops_of = self.hops = {
            **contraction.core_hops,
            **{node: contraction.hops(node) for node in contraction.special},
        }
        index = self.index = {node: i for i, node in enumerate(kept)}
        # (tail, head) by index, and the hops; chains back to their tail are left out.
        self.chains: list[tuple[int, int, tuple[Hop, ...]]] = []
        # Per kept node, every chain leaving it, loops included (for cuts).
        self.corridors: dict[str, list[tuple[Hop, ...]]] = {}
        # Every chain is an arc of Dinic's graph in every window, one without
        # room too: its capacity is then 0 and no search crosses it, which
        # finds the flow an arc list of the chains with room finds (their
        # order is the same), but the lists below serve every window.
        # Arc 2k is chain k from tail to head, arc 2k + 1 its reverse.
        self.arc_to: list[int] = []
        self.arc_adj: list[list[int]] = [[] for _ in kept]
        self.arc_of: dict[tuple[str, bool], int] = {}
        # One hop per link any chain crosses: what a symmetric window reads
        # by link (`WindowView.by_link`).
        firsts: dict[str, Hop] = {}
        # The chains crossing each link (a greedy path placed on a link
        # changes what they can take).
        self.on_link: dict[str, list[int]] = {}
        inner = contraction.kept_set
        # One pass over the chains (`Contraction.corridors` walks them alike):
        # a skeleton is built for each new pair a request names.
        for node in kept:
            found: list[tuple[Hop, ...]] = []
            self.corridors[node] = found
            tail = index[node]
            for first in hops_of[node]:
                walk, here = [first], first
                while here.to not in inner:
                    onward = hops_of[here.to]
                    here = onward[1] if onward[0].link == here.link else onward[0]
                    walk.append(here)
                hops = tuple(walk)
                found.append(hops)
                if here.to == node:
                    continue
                head, arc = index[here.to], 2 * len(self.chains)
                self.chains.append((tail, head, hops))
                self.arc_to += (head, tail)
                self.arc_adj[tail].append(arc)
                self.arc_adj[head].append(arc + 1)
                self.arc_of[(first.link, first.forward)] = arc
                for hop in hops:
                    firsts[hop.link] = hop
                    self.on_link.setdefault(hop.link, []).append(arc >> 1)
        self.reads = tuple(firsts.values())
        self._links = tuple(firsts)
        self._index: tuple[Ints, Ints] | None = None  # numpy's, made when first read
        line = _line(self.chains, index[ends[0]], index[ends[1]], len(kept))
        # The hops from one end to the other when they are the only way between them.
        self.line: tuple[Hop, ...] | None = (
            None if line is None else tuple(h for k in line for h in self.chains[k][2])
        )

    def _columns_and_runs(self) -> tuple[Ints, Ints]:
        """Where each chain's links are among `reads`, laid end to end, and where each
        chain's run of them begins (`narrowest` takes the least of each run)."""
        import numpy as np

        if self._index is None:
            column = {link: i for i, link in enumerate(self._links)}
            columns = [column[hop.link] for _, _, hops in self.chains for hop in hops]
            runs = accumulate((len(hops) for _, _, hops in self.chains[:-1]), initial=0)
            self._index = (np.array(columns, np.int64), np.fromiter(runs, np.int64))
        return self._index

    def narrowest(self, free: Mapping[str, int]) -> list[int]:
        """Each chain's width: the least `free` (by link id) of its links, in chain order.

        One numpy pass: a window's max flow reads some dozens of chains, and
        a Python loop over them cost more than the flow itself.
        """
        import numpy as np  # loaded only by the vectorised scans that need it

        if not self.chains:
            return []
        try:
            read = np.fromiter(map(free.__getitem__, self._links), np.int64, len(self._links))
        except OverflowError:  # beyond int64 (no real link): the loop serves
            return [min(free[hop.link] for hop in hops) for _, _, hops in self.chains]
        columns, runs = self._columns_and_runs()
        widths: list[int] = np.minimum.reduceat(read[columns], runs).tolist()
        return widths

    @staticmethod
    def of(topology: Topology, ends: tuple[str, str]) -> Skeleton:
        """The skeleton of `ends`, kept for the pair."""
        return pair_memo(topology, ("skeleton", *ends), lambda: Skeleton(topology, ends))


def _line(
    chains: Sequence[tuple[int, int, tuple[Hop, ...]]], src: int, dst: int, kept: int
) -> tuple[int, ...] | None:
    """The chains from src to dst, in order, when they are the only way between the ends:
    each kept node joined to the next by exactly one chain each way, nothing else (a
    pair's max flow is then the narrowest of them). None otherwise."""
    if kept < 2 or len(chains) != 2 * (kept - 1):
        return None
    onward: dict[int, list[tuple[int, int]]] = {}
    for k, (tail, head, _) in enumerate(chains):
        onward.setdefault(tail, []).append((head, k))
    line: list[int] = []
    came, here = -1, src
    while here != dst:
        ahead = [(head, k) for head, k in onward.get(here, ()) if head != came]
        if len(ahead) != 1:
            return None
        came, (here, k) = here, ahead[0]
        line.append(k)
    return tuple(line) if len(line) == kept - 1 else None
