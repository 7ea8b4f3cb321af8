"""Maximum flow between two nodes over one window's free capacity, and its decomposition.

Dinic's algorithm (BFS levels, blocking flows with residual reverse arcs) over
the multigraph: every direction of every link, parallel links included, is an
arc of its own, so a path found here names real links.

Seed 002 selects paths with an Edmonds-Karp-like max flow; Dinic finds the
same value with fewer BFS passes and keeps everything in exact integers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from braid.core.network import Direction
from braid.core.paths import Path
from braid.core.search import widest_path
from braid.core.topology import Hop, Topology

Usable = Callable[[Hop], int]
Cut = tuple[Hop, ...]  # the hops from a cut's source side to its sink side


@dataclass(frozen=True, slots=True)
class FlowPath:
    """A simple path and the bandwidth (bit/s) it carries."""

    path: Path
    amount: int


@dataclass(frozen=True, slots=True)
class MaxFlow:
    """A maximum flow: its value, the net flow per link direction, and its paths.

    `flows` holds only positive entries and at most one direction per link
    (opposite flows on one link are cancelled). `paths` decompose the flow
    into simple paths, widest first; their amounts sum to `value` and are
    jointly feasible, because together they never put more on a link than
    the flow does.
    """

    value: int
    flows: Mapping[Direction, int]
    paths: tuple[FlowPath, ...]


class _Residual:
    """Arc arrays for Dinic: arc i and arc i ^ 1 are each other's reverse."""

    def __init__(self, topology: Topology, usable: Usable) -> None:
        self.index = {node: i for i, node in enumerate(topology.nodes)}
        self.adj: list[list[int]] = [[] for _ in self.index]
        self.to: list[int] = []
        self.cap: list[int] = []
        self.arc_of: dict[Direction, int] = {}
        self.reach: list[int] = []
        for node, hops in topology.adjacency.items():
            for hop in hops:
                capacity = usable(hop)
                if capacity > 0:
                    arc = self._add(self.index[node], self.index[hop.to], capacity)
                    self.arc_of[(hop.link, hop.forward)] = arc

    def _add(self, u: int, v: int, capacity: int) -> int:
        arc = len(self.to)
        self.to += [v, u]
        self.cap += [capacity, 0]
        self.adj[u].append(arc)
        self.adj[v].append(arc + 1)
        return arc

    def flow_on(self, arc: int) -> int:
        """What was pushed along `arc`: the capacity its reverse arc has gained."""
        return self.cap[arc ^ 1]

    def levels(self, s: int, t: int) -> list[int] | None:
        level = [-1] * len(self.adj)
        level[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for arc in self.adj[u]:
                v = self.to[arc]
                if self.cap[arc] > 0 and level[v] < 0:
                    level[v] = level[u] + 1
                    queue.append(v)
        self.reach = level
        return level if level[t] >= 0 else None

    def augment(self, s: int, t: int, level: list[int], cursor: list[int]) -> int:
        """Push one augmenting path of the level graph; 0 when the phase is blocked.

        Iterative, so deep graphs cannot hit Python's recursion limit; `cursor`
        remembers each node's next untried arc across calls (current-arc rule).
        """
        trail: list[int] = []
        u = s
        while u != t:
            adj = self.adj[u]
            while cursor[u] < len(adj):
                arc = adj[cursor[u]]
                v = self.to[arc]
                if self.cap[arc] > 0 and level[v] == level[u] + 1:
                    trail.append(arc)
                    u = v
                    break
                cursor[u] += 1
            else:
                if u == s:
                    return 0
                level[u] = -1  # a dead end; never enter it again this phase
                u = self.to[trail.pop() ^ 1]
                cursor[u] += 1
        pushed = min(self.cap[arc] for arc in trail)
        for arc in trail:
            self.cap[arc] -= pushed
            self.cap[arc ^ 1] += pushed
        return pushed

    def source_side(self) -> set[str]:
        """Nodes the last BFS reached: after `run`, the source side of a minimum cut."""
        return {node for node, i in self.index.items() if self.reach[i] >= 0}

    def run(self, src: str, dst: str) -> int:
        s, t = self.index[src], self.index[dst]
        total = 0
        while (level := self.levels(s, t)) is not None:
            cursor = [0] * len(self.adj)
            while pushed := self.augment(s, t, level, cursor):
                total += pushed
        return total


def link_usable(topology: Topology, usable: Usable, *, symmetric: bool) -> Usable:
    """What one booking can take on each hop: if symmetric, the less free direction.

    A symmetric `WindowView` gives this already; applying it here as well
    keeps max flow right for any other `usable` a caller hands in.
    """
    if not symmetric:
        return usable

    def both_ways(hop: Hop) -> int:
        link = topology.links[hop.link]
        back = Hop(hop.link, link.a if hop.forward else link.b, not hop.forward)
        return min(usable(hop), usable(back))

    return both_ways


def max_flow_value(
    topology: Topology, src: str, dst: str, usable: Usable, *, symmetric: bool = True
) -> int:
    """Only the value of the maximum flow: a cheap bound before a full split."""
    return min_cut(topology, src, dst, usable, symmetric=symmetric)[0]


def min_cut(
    topology: Topology, src: str, dst: str, usable: Usable, *, symmetric: bool = True
) -> tuple[int, Cut]:
    """The max-flow value and the hops leaving a minimum cut's source side.

    The cut lists every hop across it, saturated or with nothing free, so its
    capacity can be re-read cheaply in another window: if it is still too
    small there, so is the max flow (any cut bounds every flow).
    """
    if src == dst:
        return 0, ()
    residual = _Residual(topology, link_usable(topology, usable, symmetric=symmetric))
    value = residual.run(src, dst)
    side = residual.source_side()
    return value, tuple(hop for node in side for hop in topology.hops(node) if hop.to not in side)


def endpoint_cuts(topology: Topology, src: str, dst: str) -> tuple[Cut, Cut]:
    """The two trivial cuts: every hop leaving src, every hop entering dst."""
    into = tuple(Hop(hop.link, dst, not hop.forward) for hop in topology.hops(dst))
    return topology.hops(src), into


def cut_capacity(cut: Cut, usable: Usable) -> int:
    return sum(max(usable(hop), 0) for hop in cut)


def max_flow(
    topology: Topology, src: str, dst: str, usable: Usable, *, symmetric: bool = True
) -> MaxFlow:
    """The maximum src -> dst flow with each hop held to `usable(hop)`, decomposed.

    With `symmetric`, a booking loads both directions of a link alike, so a
    link offers the smaller of its two directions and may end up carrying
    flow one way only; without it the two directions are independent
    resources. Opposite flows are cancelled in both cases (it keeps the
    value, frees capacity and removes two-node cycles).
    """
    if src == dst:
        return MaxFlow(0, {}, ())
    usable = link_usable(topology, usable, symmetric=symmetric)
    residual = _Residual(topology, usable)
    value = residual.run(src, dst)
    flows = _net_flows(residual)
    _check_joint(topology, flows, usable)
    return MaxFlow(value, flows, decompose(topology, src, dst, flows, value))


def _net_flows(residual: _Residual) -> dict[Direction, int]:
    flows: dict[Direction, int] = {}
    for (link, forward), arc in residual.arc_of.items():
        here = residual.flow_on(arc)
        back_arc = residual.arc_of.get((link, not forward))
        back = residual.flow_on(back_arc) if back_arc is not None else 0
        if here > back:
            flows[(link, forward)] = here - back
    return flows


def _check_joint(topology: Topology, flows: Mapping[Direction, int], usable: Usable) -> None:
    """Every link's single-direction flow fits its hop's usable bandwidth.

    Cancelling can only lower a flow, so this holds by construction; it is
    checked because a silent violation here would overbook a real link.
    """
    for (link_id, forward), amount in flows.items():
        link = topology.links[link_id]
        hop = Hop(link_id, link.b if forward else link.a, forward)
        if (link_id, not forward) in flows or amount > usable(hop):
            raise RuntimeError(f"max flow on link {link_id} breaks its capacity")


def decompose(
    topology: Topology, src: str, dst: str, flows: Mapping[Direction, int], value: int
) -> tuple[FlowPath, ...]:
    """Peel simple paths off a flow, always the widest one left; cycles are dropped.

    Each peel but the last empties an arc, so there are at most as many paths
    as arcs carrying flow. Once `value` is peeled, what remains is a circulation that carries
    nothing from src to dst, and it is discarded.
    """
    left = dict(flows)
    paths: list[FlowPath] = []

    def remaining(hop: Hop) -> int:
        return left.get((hop.link, hop.forward), 0)

    while value > 0:
        found = widest_path(topology, src, dst, remaining)
        if found is None:
            raise RuntimeError("flow decomposition lost track of the flow")
        path, width = found
        width = min(width, value)
        for key in path.directions(topology):
            left[key] -= width
        paths.append(FlowPath(path, width))
        value -= width
    return tuple(paths)
