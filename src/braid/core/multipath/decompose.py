"""A flow peeled into simple paths, widest first, only as far as a caller asks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from braid.core.graph.search import widest_path
from braid.core.model.network import Direction
from braid.core.model.paths import Path
from braid.core.model.topology import Hop, Topology


@dataclass(frozen=True, slots=True)
class FlowPath:
    """A simple path and the bandwidth (bit/s) it carries."""

    path: Path
    amount: int


class Peeling:
    """Simple paths peeled off a flow, always the widest one left; cycles are dropped.

    Each peel but the last empties an arc, so there are at most as many paths
    as arcs carrying flow. Once the value is peeled, what remains is a
    circulation that carries nothing from src to dst, and it is discarded.
    Each path depends only on those peeled before it, so a caller that needs
    the first few (a split over k paths) stops there, and a later caller
    goes on from them.
    """

    def __init__(
        self, topology: Topology, src: str, dst: str, flows: Mapping[Direction, int], value: int
    ) -> None:
        self.topology, self.src, self.dst = topology, src, dst
        self.flows = flows
        self.value = value  # what is still to be peeled
        self.found: list[FlowPath] = []
        # Both made when the first path is peeled: many callers want the value alone.
        self.carrying: Topology | None = None
        self.left: dict[Direction, int] = {}  # the flow not peeled yet

    def _carrying(self) -> Topology:
        """The topology with only the hops that carry flow: the searches cross no other.

        In the topology's order, so ties fall as on the whole graph.
        """
        topology, flows = self.topology, self.flows
        links = topology.links
        tails = {links[link].a if forward else links[link].b for link, forward in flows}
        return replace(
            topology,
            adjacency={
                node: tuple(h for h in topology.hops(node) if (h.link, h.forward) in flows)
                for node in tails
            },
        )

    def first(self, count: int | None = None) -> tuple[FlowPath, ...]:
        """The first `count` paths (all of them when None)."""
        while self.value > 0 and (count is None or len(self.found) < count):
            self._peel()
        return tuple(self.found if count is None else self.found[:count])

    def _remaining(self, hop: Hop) -> int:
        return self.left.get((hop.link, hop.forward), 0)

    def _peel(self) -> None:
        if self.carrying is None:
            self.carrying, self.left = self._carrying(), dict(self.flows)
        found = widest_path(
            self.carrying, self.src, self.dst, self._remaining, skip_dead_ends=False
        )
        if found is None:
            raise RuntimeError("flow decomposition lost track of the flow")
        path, width = found
        width = min(width, self.value)
        for key in path.directions(self.topology):
            self.left[key] -= width
        self.found.append(FlowPath(path, width))
        self.value -= width


def decompose(
    topology: Topology, src: str, dst: str, flows: Mapping[Direction, int], value: int
) -> tuple[FlowPath, ...]:
    """Every path of `Peeling`: the whole flow as simple paths, widest first."""
    return Peeling(topology, src, dst, flows, value).first()
