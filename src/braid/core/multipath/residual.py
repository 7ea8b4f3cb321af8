"""What a window has left once some paths are tentatively placed (no reverse arcs).

Greedy path choices (successive widest paths, filling a candidate set) place
paths one after another and never undo one, unlike max flow; this ledger
keeps their loads exactly as `Network.loads` will book them, so whatever it
admits commits without overbooking.
"""

from __future__ import annotations

from collections.abc import Sequence

from braid.core.graph.reach import hop_table
from braid.core.model.network import WindowView
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology
from braid.core.multipath.decompose import FlowPath
from braid.core.multipath.greedy import ChainWidths

# A symmetric booking loads both directions of a link alike, so one counter
# per link suffices; a directional one needs a counter per direction.
_Key = str | tuple[str, bool]


def path_hops(topology: Topology, path: Path) -> tuple[Hop, ...]:
    """The hops a path takes, in order (a path has one node more than links)."""
    steps = zip(path.nodes, path.links, path.nodes[1:], strict=False)
    try:
        return tuple(map(hop_table(topology).__getitem__, steps))
    except KeyError:  # a link that does not join those nodes: taken as the path says
        return tuple(
            Hop(link, there, topology.links[link].a == here)
            for here, there, link in zip(path.nodes, path.nodes[1:], path.links, strict=False)
        )


class Ledger:
    """Free capacity of a window minus the loads placed so far."""

    def __init__(self, view: WindowView) -> None:
        self.view = view
        self._symmetric = view.symmetric
        self._used: dict[_Key, int] = {}

    def _key(self, hop: Hop) -> _Key:
        return hop.link if self._symmetric else (hop.link, hop.forward)

    def usable(self, hop: Hop) -> int:
        key: _Key = hop.link if self._symmetric else (hop.link, hop.forward)
        return self.view.usable(hop) - self._used.get(key, 0)

    def room(self, hops: Sequence[Hop]) -> int:
        """The most a path over `hops` can still take on top of what is placed."""
        if self._symmetric:
            # `usable` by link id, without a call per hop (greedy searches ask often).
            free, used = self.view.by_link(hops), self._used
            return min((free[hop.link] - used.get(hop.link, 0) for hop in hops), default=0)
        return min((self.usable(hop) for hop in hops), default=0)

    def place(self, hops: Sequence[Hop], amount: int) -> None:
        used = self._used
        for hop in hops:
            key = self._key(hop)
            used[key] = used.get(key, 0) + amount


class _Greedy:
    """Successive widest paths of one window and pair, found as far as asked so far.

    The greedy sequence does not depend on where it is cut, so every caller
    (with any limit or target) gets a prefix of the same sequence, and each
    widest-path search runs once per window.
    """

    def __init__(self, view: WindowView, src: str, dst: str) -> None:
        self.view, self.src, self.dst = view, src, dst
        self.ledger = Ledger(view)
        self.found: list[FlowPath] = []
        self.exhausted = False
        known = view.memo.get(("chain widths", src, dst))
        self.chains = ChainWidths(
            view.topology, src, dst, known if isinstance(known, list) else None
        )

    def prefix(self, limit: int, target: int | None) -> list[FlowPath]:
        carried = 0
        for count, part in enumerate(self.found):
            if count >= limit or (target is not None and carried >= target):
                return self.found[:count]
            carried += part.amount
        while len(self.found) < limit and (target is None or carried < target):
            if not self._extend():
                break
            carried += self.found[-1].amount
        return list(self.found)

    def _extend(self) -> bool:
        if self.exhausted:
            return False
        best = self.chains.widest(self.ledger.room)
        if best is None:
            self.exhausted = True
            return False
        path, hops, width = best
        self.ledger.place(hops, width)
        self.chains.forget(hops)
        self.found.append(FlowPath(path, width))
        return True


def successive_widest(
    view: WindowView, src: str, dst: str, limit: int, target: int | None = None
) -> list[FlowPath]:
    """Up to `limit` widest paths, each taken whole on what the earlier ones left.

    Stops early once the paths carry `target`; each path saturates a hop, so
    the loop ends even without a limit on the graph's size.
    """
    key = ("successive_widest", src, dst)
    greedy = view.memo.get(key)
    if not isinstance(greedy, _Greedy):
        greedy = view.memo[key] = _Greedy(view, src, dst)
    return greedy.prefix(limit, target)
