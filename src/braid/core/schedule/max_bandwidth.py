"""Highest bandwidth one path can carry throughout a window (widest path)."""

from __future__ import annotations

from braid.core.graph.search import widest_path
from braid.core.model.network import Network
from braid.core.model.paths import Path


def widest(
    network: Network, src: str, dst: str, start: int, end: int, *, symmetric: bool = True
) -> tuple[Path, int] | None:
    """The path with the most bandwidth free throughout [start, end), and that bandwidth."""
    view = network.window(start, end, symmetric=symmetric)
    view.prefetch()  # the widest path reads most links
    return widest_path(network.topology, src, dst, view.usable)
