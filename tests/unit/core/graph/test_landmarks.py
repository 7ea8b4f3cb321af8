"""Landmark bounds never exceed the true lowest latency (A* stays exact)."""

import math
from pathlib import Path as FsPath

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.topology_files import load_topology
from braid.core.graph.landmarks import landmarks
from braid.core.model.topology import Topology
from tests.unit.core.netgen import topologies


def latencies_to(topology: Topology, target: str) -> dict[str, float]:
    graph = nx.Graph()
    graph.add_nodes_from(topology.nodes)
    for link in topology.links.values():
        old = graph.get_edge_data(link.a, link.b, {}).get("w", math.inf)
        graph.add_edge(link.a, link.b, w=min(old, link.latency_ms))
    lengths: dict[str, float] = nx.single_source_dijkstra_path_length(graph, target, weight="w")
    return lengths


@settings(max_examples=150, deadline=None)
@given(topologies(max_nodes=8), st.data())
def test_bounds_are_lower_bounds(topology: Topology, data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(sorted(topology.nodes)))
    bounds = landmarks(topology).bounds_to(target)
    exact = latencies_to(topology, target)
    for node in topology.nodes:
        if node in exact:
            assert bounds[node] <= exact[node] + 1e-9
        else:
            assert bounds[node] == math.inf
    assert bounds[target] == 0.0


ZOO = FsPath(__file__).resolve().parents[4].parent / "shared" / "data" / "topology-zoo"


@pytest.mark.skipif(not (ZOO / "Kdl.graphml").is_file(), reason="Topology Zoo data not found")
def test_bounds_on_a_large_network_are_lower_bounds() -> None:
    topology = load_topology(ZOO / "Kdl.graphml", default_capacity_bps=10**11)
    finder = landmarks(topology)
    for target in sorted(topology.nodes)[::97]:
        bounds = finder.bounds_to(target)
        for node, latency in latencies_to(topology, target).items():
            assert bounds[node] <= latency + 1e-9
