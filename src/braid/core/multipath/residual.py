"""What a window has left once some paths are tentatively placed (no reverse arcs).

Greedy path choices (successive widest paths, filling a candidate set) place
paths one after another and never undo one, unlike max flow; this ledger
keeps their loads exactly as `Network.loads` will book them, so whatever it
admits commits without overbooking.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from braid.core.multipath.maxflow import FlowPath
from braid.core.network import WindowView
from braid.core.paths import Path
from braid.core.search import widest_path
from braid.core.topology import Hop, Topology

# A symmetric booking loads both directions of a link alike, so one counter
# per link suffices; a directional one needs a counter per direction.
_Key = str | tuple[str, bool]


def path_hops(topology: Topology, path: Path) -> tuple[Hop, ...]:
    """The hops a path takes, in order (a path has one node more than links)."""
    return tuple(
        Hop(link, there, topology.links[link].a == here)
        for here, there, link in zip(path.nodes, path.nodes[1:], path.links, strict=False)
    )


class Ledger:
    """Free capacity of a window minus the loads placed so far."""

    def __init__(self, view: WindowView) -> None:
        self.view = view
        self._used: dict[_Key, int] = defaultdict(int)

    def _key(self, hop: Hop) -> _Key:
        return hop.link if self.view.symmetric else (hop.link, hop.forward)

    def usable(self, hop: Hop) -> int:
        return self.view.usable(hop) - self._used[self._key(hop)]

    def room(self, hops: Sequence[Hop]) -> int:
        """The most a path over `hops` can still take on top of what is placed."""
        return min((self.usable(hop) for hop in hops), default=0)

    def place(self, hops: Sequence[Hop], amount: int) -> None:
        for hop in hops:
            self._used[self._key(hop)] += amount


def successive_widest(
    view: WindowView, src: str, dst: str, limit: int, target: int | None = None
) -> list[FlowPath]:
    """Up to `limit` widest paths, each taken whole on what the earlier ones left.

    Stops early once the paths carry `target`; each path saturates a hop, so
    the loop ends even without a limit on the graph's size.
    """
    ledger = Ledger(view)
    found: list[FlowPath] = []
    carried = 0
    while len(found) < limit and (target is None or carried < target):
        best = widest_path(view.topology, src, dst, ledger.usable)
        if best is None:
            break
        path, width = best
        ledger.place(path_hops(view.topology, path), width)
        found.append(FlowPath(path, width))
        carried += width
    return found
