"""Maximum flow between two nodes over one window's free capacity, and its decomposition.

Dinic's algorithm (`dinic`) over the multigraph: every direction of every link,
parallel links included, is an arc of its own (chains of pass-through nodes
contracted), so a path found here names real links.

Seed 002 selects paths with an Edmonds-Karp-like max flow; Dinic finds the
same value with fewer BFS passes and keeps everything in exact integers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from braid.core.graph.reach import hop_table
from braid.core.graph.search import UNBOUNDED
from braid.core.graph.sides import known_side, walled_in
from braid.core.model.network import Direction, WindowView
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.chains import Skeleton
from braid.core.multipath.decompose import FlowPath, Peeling
from braid.core.multipath.dinic import Residual, ran

Usable = Callable[[Hop], int]
Cut = tuple[Hop, ...]  # the hops from a cut's source side to its sink side


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
    _paths: tuple[FlowPath, ...] | Peeling

    @property
    def paths(self) -> tuple[FlowPath, ...]:
        """The decomposition, peeled the first time it is asked for."""
        found = self._paths
        if isinstance(found, Peeling):
            found = found.first()
            object.__setattr__(self, "_paths", found)  # frozen, but filled in once
        return found

    def first_paths(self, count: int) -> tuple[FlowPath, ...]:
        """`paths[:count]`, peeled no further than that (a split wants at most k)."""
        found = self._paths
        return found.first(count) if isinstance(found, Peeling) else found[:count]


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
    """Only the value of the maximum flow: a cheap bound before a full split.

    The cut's source side is not looked for: an agent's offers ask only this.
    """
    if src == dst:
        return 0
    per_link = link_usable(topology, usable, symmetric=symmetric)
    skeleton = Skeleton.of(topology, (src, dst))
    if skeleton.line is not None:  # one way only (a chain of a small domain, say)
        return max(0, min([per_link(hop) for hop in skeleton.line]))
    return ran(topology, src, dst, per_link).value


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
    residual = ran(topology, src, dst, link_usable(topology, usable, symmetric=symmetric))
    side = residual.source_side()
    # Hops into dead ends are left out: no src -> dst path takes them.
    hops = residual.skeleton.hops
    cut = (hop for node in side for hop in hops[node] if hop.to not in side)
    return residual.value, tuple(cut)


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
    room = [free if free > 0 else 0 for free in map(usable, cut)]
    if paths >= len(room):
        return sum(room)  # every hop counts: nothing to choose
    room.sort(reverse=True)
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
    residual = ran(topology, src, dst, usable)
    value = residual.value
    flows = _net_flows(residual)
    _check_joint(topology, flows, usable)
    return MaxFlow(value, flows, Peeling(topology, src, dst, flows, value))


def _net_flows(residual: Residual) -> dict[Direction, int]:
    """Net flow per link direction: each chain's flow less its reverse chain's."""
    flows: dict[Direction, int] = {}
    arc_of, cap = residual.skeleton.arc_of, residual.cap
    for k, (_, _, hops) in enumerate(residual.skeleton.chains):
        here = cap[2 * k + 1]  # `flow_on(2 k)`
        if here <= 0:
            continue
        # The reverse chain starts with this one's last hop, the other way.
        last = hops[-1]
        back_arc = arc_of.get((last.link, not last.forward))
        back = residual.flow_on(back_arc) if back_arc is not None else 0
        if here > back:
            for hop in hops:
                flows[(hop.link, hop.forward)] = here - back
    return flows


def _check_joint(topology: Topology, flows: Mapping[Direction, int], usable: Usable) -> None:
    """Every link's single-direction flow fits its hop's usable bandwidth.

    Cancelling can only lower a flow, so this holds by construction; it is
    checked because a silent violation here would overbook a real link.
    """
    # Hops are looked up, not built: a frozen dataclass costs a call per field.
    links, hop_of = topology.links, hop_table(topology)
    for (link_id, forward), amount in flows.items():
        link = links[link_id]
        ends = (link.a, link_id, link.b) if forward else (link.b, link_id, link.a)
        hop = hop_of.get(ends) or Hop(link_id, ends[2], forward)
        if (link_id, not forward) in flows or amount > usable(hop):
            raise RuntimeError(f"max flow on link {link_id} breaks its capacity")
