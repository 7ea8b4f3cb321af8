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
from dataclasses import dataclass, replace

from braid.core.graph.search import UNBOUNDED, widest_path
from braid.core.graph.sides import known_side, walled_in, window_of
from braid.core.model.network import Direction, WindowView
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.chains import Chain, Skeleton

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
    # The paths, or how to peel them: a refusal often needs only the value.
    _paths: tuple[FlowPath, ...] | Callable[[], tuple[FlowPath, ...]]

    @property
    def paths(self) -> tuple[FlowPath, ...]:
        """The decomposition, peeled the first time it is asked for."""
        found = self._paths
        if callable(found):
            found = found()
            object.__setattr__(self, "_paths", found)  # frozen, but filled in once
        return found


class _Residual:
    """Arc arrays for Dinic: arc i and arc i ^ 1 are each other's reverse.

    Chains of pass-through nodes are contracted (see `chains`): arc 2k is
    chain k, whatever flows on it flows on every hop of it.
    """

    def __init__(self, topology: Topology, usable: Usable, ends: tuple[str, str]) -> None:
        self.topology = topology
        self.usable = usable
        skeleton = Skeleton.of(topology, ends)
        self.skeleton = skeleton
        kept = skeleton.kept
        self.index = skeleton.index  # shared with the skeleton: never changed
        self.adj: list[list[int]] = [[] for _ in kept]
        self.to: list[int] = []
        self.cap: list[int] = []
        # The arc of each chain by its first hop (link, direction).
        self.arc_of: dict[Direction, int] = {}
        self.chains: list[Chain] = []
        self.reach: list[int] = []
        self.value = 0  # the flow's value once `run`
        # Chains with room on every hop, as `Contraction.chains_from` lists them.
        view = window_of(usable)
        free = view.by_link(skeleton.reads) if view is not None and view.symmetric else None
        to, cap, adj, chains, arc_of = self.to, self.cap, self.adj, self.chains, self.arc_of
        for (tail, head, hops), links in zip(skeleton.chains, skeleton.links, strict=True):
            widths = tuple(map(usable, hops) if free is None else map(free.__getitem__, links))
            width = min(widths)
            if width > 0:  # arc 2k and its reverse 2k + 1
                arc = len(to)
                to += (head, tail)
                cap += (width, 0)
                adj[tail].append(arc)
                adj[head].append(arc + 1)
                chains.append(Chain(kept[tail], kept[head], hops, widths, width))
                arc_of[(hops[0].link, hops[0].forward)] = arc

    def flow_on(self, arc: int) -> int:
        """What was pushed along `arc`: the capacity its reverse arc has gained."""
        return self.cap[arc ^ 1]

    def levels(self, s: int, t: int) -> list[int] | None:
        adj, to, cap = self.adj, self.to, self.cap
        level = [-1] * len(adj)
        level[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            # Nodes beyond t's level lie on no shortest augmenting path: the
            # phase's blocking flow is the same without them.
            if 0 <= level[t] <= level[u]:
                break
            for arc in adj[u]:
                v = to[arc]
                if cap[arc] > 0 and level[v] < 0:
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


def link_usable(topology: Topology, usable: Usable, *, symmetric: bool) -> Usable:
    """What one booking can take on each hop: if symmetric, the less free direction.

    A symmetric `WindowView` gives this already; applying it here as well
    keeps max flow right for any other `usable` a caller hands in.
    """
    return _per_link(topology, usable, symmetric=symmetric, prefetch=True)


def _per_link(topology: Topology, usable: Usable, *, symmetric: bool, prefetch: bool) -> Usable:
    """`link_usable`; `prefetch` reads every link of a large window at once first."""
    if not symmetric:
        return usable
    view = getattr(usable, "__self__", None)
    if isinstance(view, WindowView) and view.symmetric and usable == view.usable:
        if prefetch:
            view.prefetch()  # max flow reads every link
        return usable  # a symmetric window gives the less free direction already

    def both_ways(hop: Hop) -> int:
        link = topology.links[hop.link]
        back = Hop(hop.link, link.a if hop.forward else link.b, not hop.forward)
        return min(usable(hop), usable(back))

    return both_ways


def flow_ceiling(
    topology: Topology, src: str, dst: str, usable: Usable, need: int, *, symmetric: bool = True
) -> int:
    """An upper bound on `max_flow_value`, cheap, and often below `need` when the flow is.

    The nodes that dst is reached from over hops with `need` free, and those
    src reaches so, are each one side of a cut whose every hop has less than
    `need` free, unless they meet; any cut's capacity bounds the flow. A
    request no single path carries is mostly walled in near one end, by a few
    such hops. UNBOUNDED if some path has `need` free throughout.
    """
    if src == dst:
        return 0
    usable = _per_link(topology, usable, symmetric=symmetric, prefetch=False)
    best = UNBOUNDED
    sides = [((dst, src), False), ((src, dst), True)]
    # A side the window knows already (the refused search found it) costs least.
    sides.sort(key=lambda side: known_side(usable, side[0], need, side[1]) is None)
    for ends, out in sides:
        wall = walled_in(topology, ends, usable, need, out=out)
        if wall is None:
            return UNBOUNDED
        best = min(best, sum(max(width, 0) for _, width in wall))
        if best < need:
            break
    return best


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
    residual = _ran(topology, src, dst, link_usable(topology, usable, symmetric=symmetric))
    side = residual.source_side()
    # Hops into dead ends are left out: no src -> dst path takes them.
    hops = residual.skeleton.hops
    cut = (hop for node in side for hop in hops[node] if hop.to not in side)
    return residual.value, tuple(cut)


def has_run(usable: Usable, src: str, dst: str) -> bool:
    """Whether the max flow between the ends has run in the window `usable` reads."""
    view = window_of(usable)
    return view is not None and isinstance(view.memo.get(("max flow run", src, dst)), _Residual)


def _ran(topology: Topology, src: str, dst: str, usable: Usable) -> _Residual:
    """The residual graph with a maximum flow, run once per window and pair.

    A refusal asks a window for its max flow, its decomposition and its
    cut; the view's memo keeps the run for the next of them (nothing reading
    it changes it).
    """
    view = window_of(usable)
    key = ("max flow run", src, dst)
    kept = view.memo.get(key) if view is not None else None
    if isinstance(kept, _Residual):
        return kept
    residual = _Residual(topology, usable, (src, dst))
    if view is not None:
        # Its chains with room, before any flow: greedy path searches in
        # the same window start from them (see `greedy`).
        view.memo[("chains", src, dst)] = list(residual.chains)
    residual.run(src, dst)
    if view is not None:
        view.memo[key] = residual
    return residual


def endpoint_cuts(topology: Topology, src: str, dst: str) -> tuple[Cut, Cut]:
    """The two trivial cuts: every hop leaving src, every hop entering dst."""
    into = tuple(Hop(hop.link, dst, not hop.forward) for hop in topology.hops(dst))
    return topology.hops(src), into


def cut_capacity(cut: Cut, usable: Usable) -> int:
    return sum(max(usable(hop), 0) for hop in cut)


def cut_offered(cut: Cut, usable: Usable, paths: int) -> int:
    """The most `paths` simple paths can carry together across `cut`.

    Every path crosses every cut; paths that first cross it on the same hop
    share that hop's free capacity, so `paths` of them carry no more than
    the `paths` largest free capacities of the cut's hops (all of them, the
    cut's capacity, once `paths` reaches the cut's size).
    """
    room = sorted((max(usable(hop), 0) for hop in cut), reverse=True)
    return sum(room[:paths])


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
    residual = _ran(topology, src, dst, usable)
    value = residual.value
    flows = _net_flows(residual)
    _check_joint(topology, flows, usable)
    return MaxFlow(value, flows, lambda: decompose(topology, src, dst, flows, value))


def _net_flows(residual: _Residual) -> dict[Direction, int]:
    """Net flow per link direction: each chain's flow less its reverse chain's."""
    flows: dict[Direction, int] = {}
    for k, chain in enumerate(residual.chains):
        here = residual.flow_on(2 * k)
        if here <= 0:
            continue
        # The reverse chain starts with this one's last hop, the other way.
        last = chain.hops[-1]
        back_arc = residual.arc_of.get((last.link, not last.forward))
        back = residual.flow_on(back_arc) if back_arc is not None else 0
        if here > back:
            for hop in chain.hops:
                flows[(hop.link, hop.forward)] = here - back
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

    # The searches only ever cross hops that carry flow: give them those
    # alone (in the topology's order, so ties fall as on the whole graph).
    links = topology.links
    tails = {links[link].a if forward else links[link].b for link, forward in flows}
    carrying = replace(
        topology,
        adjacency={
            node: tuple(h for h in topology.hops(node) if (h.link, h.forward) in flows)
            for node in tails
        },
    )
    while value > 0:
        found = widest_path(carrying, src, dst, remaining, skip_dead_ends=False)
        if found is None:
            raise RuntimeError("flow decomposition lost track of the flow")
        path, width = found
        width = min(width, value)
        for key in path.directions(topology):
            left[key] -= width
        paths.append(FlowPath(path, width))
        value -= width
    return tuple(paths)
