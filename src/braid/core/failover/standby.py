"""A protected reservation's standby path: link-disjoint from its primary where one exists.

One shortest-path search with a lexicographic cost — first the number of
links shared with the primary, then latency, then hops — finds a fully
disjoint standby whenever the network has one with room, and otherwise the
path that shares the fewest links (the caller says which it shares). Only
hops with room for the bandwidth over the whole window are crossed; the
caller's `usable` sees the primary already booked, so a shared link must
have room for both (the standby's capacity is reserved, never shared).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology

__all__ = ["Standby", "standby_path"]


@dataclass(frozen=True, slots=True)
class Standby:
    path: Path
    shared: tuple[str, ...]  # links the standby shares with the primary; empty: disjoint

    @property
    def disjoint(self) -> bool:
        return not self.shared


_Cost = tuple[int, float, int]


def standby_path(
    topology: Topology, primary: Path, usable: Callable[[Hop], int], bandwidth: int
) -> Standby | None:
    """The most disjoint path from `primary`'s first to last node with `bandwidth` free.

    None when every such path is the primary itself (or there is none).
    """
    src, dst = primary.nodes[0], primary.nodes[-1]
    on_primary = frozenset(primary.links)
    best: dict[str, _Cost] = {src: (0, 0.0, 0)}
    came: dict[str, tuple[str, str]] = {}  # node -> (previous node, link)
    queue: list[tuple[_Cost, str]] = [((0, 0.0, 0), src)]
    done: set[str] = set()
    while queue:
        cost, node = heapq.heappop(queue)
        if node in done:
            continue
        done.add(node)
        if node == dst:
            break
        for hop in topology.hops(node):
            if hop.to in done or usable(hop) < bandwidth:
                continue
            link = topology.links[hop.link]
            step = (cost[0] + (hop.link in on_primary), cost[1] + link.latency_ms, cost[2] + 1)
            if step < best.get(hop.to, (len(topology.links) + 1, 0.0, 0)):
                best[hop.to] = step
                came[hop.to] = (node, hop.link)
                heapq.heappush(queue, (step, hop.to))
    if dst not in done:
        return None
    path = _walk_back(came, src, dst)
    if path == primary:
        return None
    return Standby(path, tuple(link for link in path.links if link in on_primary))


def _walk_back(came: dict[str, tuple[str, str]], src: str, dst: str) -> Path:
    nodes, links = [dst], []
    while nodes[-1] != src:
        node, link = came[nodes[-1]]
        nodes.append(node)
        links.append(link)
    return Path(tuple(reversed(nodes)), tuple(reversed(links)))
