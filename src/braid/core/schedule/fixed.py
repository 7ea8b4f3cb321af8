"""Fixed slot: a path carrying `need` throughout [start, end)."""

from __future__ import annotations

from braid.core.graph.search import shortest_feasible_path
from braid.core.model.network import Network
from braid.core.model.paths import Path


def fixed_path(
    network: Network, src: str, dst: str, need: int, start: int, end: int, *, symmetric: bool = True
) -> Path | None:
    """The lowest-latency path with `need` free on every hop for the whole window."""
    view = network.window(start, end, symmetric=symmetric)
    return shortest_feasible_path(network.topology, src, dst, view.usable, need)
