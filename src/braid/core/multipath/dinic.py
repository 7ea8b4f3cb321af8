"""Dinic's algorithm over a pair's contracted graph (`chains.Skeleton`), one window at a time.

BFS levels, blocking flows with residual reverse arcs, exact integers. The
arcs and their order come from the skeleton, the same in every window; a
window only gives each chain its capacity (the least free on its links).
"""

from __future__ import annotations

from collections.abc import Callable

from braid.core.graph.sides import window_of
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.chains import Skeleton

Usable = Callable[[Hop], int]


class Residual:
    """Arc capacities for Dinic: arc i and arc i ^ 1 are each other's reverse.

    Chains of pass-through nodes are contracted (see `chains`): arc 2k is
    chain k of the skeleton, whatever flows on it flows on every hop of it.
    """

    def __init__(self, topology: Topology, usable: Usable, ends: tuple[str, str]) -> None:
        self.usable = usable
        skeleton = self.skeleton = Skeleton.of(topology, ends)
        self.index = skeleton.index  # shared with the skeleton: never changed
        self.adj, self.to = skeleton.arc_adj, skeleton.arc_to  # likewise
        self.widths = chain_widths(skeleton, usable)
        # A chain without room is an arc of capacity 0 (or less): never crossed.
        self.cap = [0] * len(self.to)
        self.cap[0::2] = self.widths
        self.reach: list[int] = []
        self.value = 0  # the flow's value once `run`

    def flow_on(self, arc: int) -> int:
        """What was pushed along `arc`: the capacity its reverse arc has gained."""
        return self.cap[arc ^ 1]

    def levels(self, s: int, t: int) -> list[int] | None:
        adj, to, cap = self.adj, self.to, self.cap
        level = [-1] * len(adj)
        level[s] = 0
        queue = [s]  # first in, first out: read in order while it grows
        for u in queue:
            deeper = level[u] + 1
            # Nodes beyond t's level lie on no shortest augmenting path: the
            # phase's blocking flow is the same without them.
            if 0 <= level[t] < deeper:
                break
            for arc in adj[u]:
                if cap[arc] > 0:
                    v = to[arc]
                    if level[v] < 0:
                        level[v] = deeper
                        queue.append(v)
        self.reach = level
        return level if level[t] >= 0 else None

    def augment(self, s: int, t: int, level: list[int], cursor: list[int]) -> int:
        """Push one augmenting path of the level graph; 0 when the phase is blocked.

        Iterative, so deep graphs cannot hit Python's recursion limit; `cursor`
        remembers each node's next untried arc across calls (current-arc rule).
        The arrays are local names: this loop is most of a max flow's time.
        """
        adj, to, cap = self.adj, self.to, self.cap
        trail: list[int] = []
        u = s
        while u != t:
            arcs, i, deeper = adj[u], cursor[u], level[u] + 1
            count = len(arcs)
            while i < count:
                arc = arcs[i]
                if cap[arc] > 0 and level[to[arc]] == deeper:
                    break
                i += 1
            cursor[u] = i
            if i < count:
                trail.append(arc)
                u = to[arc]
                continue
            if u == s:
                return 0
            level[u] = -1  # a dead end; never enter it again this phase
            u = to[trail.pop() ^ 1]
            cursor[u] += 1
        pushed = min([cap[arc] for arc in trail])
        for arc in trail:
            cap[arc] -= pushed
            cap[arc ^ 1] += pushed
        return pushed

    def source_side(self) -> set[str]:
        """After `run`, the source side of a minimum cut, inner chain nodes included.

        Kept nodes the last BFS reached; the inner nodes of chains between
        two of them, and of chains that loop back to one (no flow uses those,
        but leaving them out would put their first hop in the cut); and the
        inner nodes of every other chain leaving one, up to its first
        narrowest hop (the hop the cut then crosses: the chain is saturated,
        or has a hop with nothing free).
        """
        reached = {node for node, i in self.index.items() if self.reach[i] >= 0}
        side = set(reached)
        for node in reached:
            for hops in self.skeleton.corridors[node]:
                if hops[-1].to in reached:
                    side.update(hop.to for hop in hops[:-1])
                    continue
                widths = [self.usable(hop) for hop in hops]
                side.update(hop.to for hop in hops[: widths.index(min(widths))])
        return side

    def run(self, src: str, dst: str) -> int:
        s, t = self.index[src], self.index[dst]
        total = 0
        while (level := self.levels(s, t)) is not None:
            cursor = [0] * len(self.adj)
            while pushed := self.augment(s, t, level, cursor):
                total += pushed
        self.value = total
        return total


def chain_widths(skeleton: Skeleton, usable: Usable) -> list[int]:
    """What each chain of the skeleton carries in the window `usable` reads (its narrowest hop)."""
    view = window_of(usable)
    if view is not None and view.symmetric:
        return skeleton.narrowest(view.by_link(skeleton.reads))
    return [min(map(usable, hops)) for _, _, hops in skeleton.chains]


def has_run(usable: Usable, src: str, dst: str) -> bool:
    """Whether the max flow between the ends has run in the window `usable` reads."""
    view = window_of(usable)
    return view is not None and isinstance(view.memo.get(("max flow run", src, dst)), Residual)


def ran(topology: Topology, src: str, dst: str, usable: Usable) -> Residual:
    """The residual graph with a maximum flow, run once per window and pair.

    A refusal asks a window for its max flow, its decomposition and its
    cut; the view's memo keeps the run for the next of them (nothing reading
    it changes it).
    """
    view = window_of(usable)
    key = ("max flow run", src, dst)
    kept = view.memo.get(key) if view is not None else None
    if isinstance(kept, Residual):
        return kept
    residual = Residual(topology, usable, (src, dst))
    if view is not None:
        # Its chains' widths, before any flow: greedy path searches in the
        # same window start from them (see `greedy`).
        view.memo[("chain widths", src, dst)] = residual.widths
    residual.run(src, dst)
    if view is not None:
        view.memo[key] = residual
    return residual
