"""Main paths (the tenant's own, checked, or the shortest) and sub-path search."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise

from braid.core.errors import InputError
from braid.core.graph.search import UNBOUNDED, Label, best_path, shortest_feasible_path
from braid.core.model.network import Direction
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.tenants.draft import Usable


def main_path(
    topology: Topology, src: str, dst: str, nodes: Sequence[str] | None, usable: Usable
) -> Path | None:
    """The request's main path with its links chosen, or None when src and dst are apart.

    Without `nodes` it is the lowest-latency path ignoring load (what a
    tenant's controller would route on). Between two nodes joined by parallel
    links, the link with the most free capacity in the window is taken.
    """
    if nodes is None:
        shortest = shortest_feasible_path(topology, src, dst, lambda _hop: 0, 0)
        if shortest is None:
            return None
        nodes = shortest.nodes
    else:
        nodes = check_main_path(topology, src, dst, nodes)
    hops = [_best_hop(topology, here, there, usable) for here, there in pairwise(nodes)]
    return Path.from_hops(nodes[0], hops)


def check_main_path(
    topology: Topology, src: str, dst: str, nodes: Sequence[str]
) -> tuple[str, ...]:
    """The node list as a tuple, or InputError('main_path') saying what is wrong."""
    if isinstance(nodes, str) or not all(isinstance(n, str) for n in nodes):
        raise InputError("main_path", f"must be a list of node ids, got {nodes!r}")
    nodes = tuple(nodes)
    if len(nodes) < 2:
        raise InputError("main_path", f"needs at least {src} and {dst}, got {list(nodes)}")
    for node in nodes:
        if node not in topology.nodes:
            raise InputError("main_path", f"unknown node {node!r}")
    if nodes[0] != src or nodes[-1] != dst:
        raise InputError(
            "main_path", f"runs {nodes[0]}->{nodes[-1]}, but the request is {src}->{dst}"
        )
    seen: set[str] = set()
    for node in nodes:
        if node in seen:
            raise InputError("main_path", f"visits {node} twice; a main path must be simple")
        seen.add(node)
    for here, there in pairwise(nodes):
        if not any(hop.to == there for hop in topology.hops(here)):
            raise InputError("main_path", f"{here} and {there} are not joined by a link")
    return nodes


def _best_hop(topology: Topology, here: str, there: str, usable: Usable) -> Hop:
    hops = [hop for hop in topology.hops(here) if hop.to == there]
    # Most free first; then lower latency, then link id, so the choice is stable.
    return min(hops, key=lambda h: (-usable(h), topology.links[h.link].latency_ms, h.link))


def path_hops(topology: Topology, path: Path) -> Iterator[Hop]:
    for (link, forward), to in zip(path.directions(topology), path.nodes[1:], strict=True):
        yield Hop(link, to, forward)


def path_room(topology: Topology, path: Path, usable: Usable) -> int:
    """What `path` can still carry: its tightest hop (never below zero)."""
    return max(0, min(usable(hop) for hop in path_hops(topology, path)))


def path_directions(topology: Topology, path: Path, symmetric: bool) -> set[Direction]:
    """The link directions a booking on `path` loads."""
    out: set[Direction] = set()
    for link, forward in path.directions(topology):
        out.add((link, forward))
        if symmetric:
            out.add((link, not forward))
    return out


def sub_path(topology: Topology, src: str, dst: str, usable: Usable) -> tuple[Path, int] | None:
    """The next sub-path and its bottleneck: lowest latency, then fewest hops,
    then the widest, over hops with residual capacity > 0.

    This is TALON's "shortest path using C_R as the metric": only links with
    room count, shortness decides, and the residual breaks ties. The label
    (latency, hops, -width) is isotonic (extending two labels by the same hop
    keeps their order), so Dijkstra finds the best one exactly. Remaining
    ties go to the node id that sorts first, which keeps results stable.
    """

    def extend(label: Label, hop: Hop) -> Label | None:
        width = min(-label[2], usable(hop))
        if width <= 0:
            return None
        return (label[0] + topology.links[hop.link].latency_ms, label[1] + 1, -width)

    found = best_path(topology, src, dst, (0.0, 0, -UNBOUNDED), extend)
    return None if found is None else (found[0], -found[1][2])
