"""Small hand-made networks and helpers shared by the multipath tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import networkx as nx

from braid.core.model.network import Network
from braid.core.model.topology import Hop, Topology, topology_from_dict

M = 1_000_000  # bit/s in one Mbit/s


def network(links: Sequence[tuple[str, str, str, int, float]]) -> Network:
    """Links as (id, a, b, capacity Mbit/s, latency ms); nodes inferred."""
    nodes = sorted({end for _, a, b, _, _ in links for end in (a, b)})
    data: dict[str, Any] = {
        "nodes": [{"id": n} for n in nodes],
        "links": [
            {"id": i, "a": a, "b": b, "capacity": c, "latency_ms": lat} for i, a, b, c, lat in links
        ],
    }
    return Network(topology_from_dict(data))


def two_links(first_ms: float, second_ms: float, capacity: int = 100) -> Network:
    """Two parallel A-B links, as in seed 002's two-path emulation."""
    return network(
        [("fast", "A", "B", capacity, first_ms), ("slow", "A", "B", capacity, second_ms)]
    )


def nx_digraph(topology: Topology, usable: Callable[[Hop], int]) -> nx.DiGraph:
    """The equivalent directed graph: parallel links' usable capacity summed per direction."""
    graph = nx.DiGraph()
    graph.add_nodes_from(topology.nodes)
    for node, hops in topology.adjacency.items():
        for hop in hops:
            if graph.has_edge(node, hop.to):
                graph[node][hop.to]["capacity"] += usable(hop)
            else:
                graph.add_edge(node, hop.to, capacity=usable(hop))
    return graph
