"""Dead ends and hop counts against brute force on random small networks."""

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.graph.reach import hop_counts, relevant_nodes, static_width
from braid.core.model.topology import Topology
from tests.unit.core.netgen import simple_paths, topologies


@settings(max_examples=200, deadline=None)
@given(topologies(max_nodes=7), st.data())
def test_every_node_on_a_simple_path_between_the_ends_is_relevant(
    topology: Topology, data: st.DataObject
) -> None:
    src, dst = data.draw(st.permutations(sorted(topology.nodes)))[:2]
    relevant = relevant_nodes(topology, (src, dst))
    on_paths = {node for path in simple_paths(topology, src, dst) for node in path.nodes}
    if relevant is not None:
        assert on_paths <= relevant
        assert {src, dst} <= relevant


@settings(max_examples=100, deadline=None)
@given(topologies(max_nodes=7), st.data())
def test_hop_counts_are_the_fewest_hops(topology: Topology, data: st.DataObject) -> None:
    src = data.draw(st.sampled_from(sorted(topology.nodes)))
    counts = hop_counts(topology, src)
    for node in topology.nodes:
        lengths = [len(p.links) for p in simple_paths(topology, src, node)] if node != src else [0]
        assert counts.get(node) == (min(lengths) if lengths else None)


@settings(max_examples=150, deadline=None)
@given(topologies(max_nodes=7), st.data())
def test_the_static_width_is_the_widest_bottleneck_either_way(
    topology: Topology, data: st.DataObject
) -> None:
    src, dst = data.draw(st.permutations(sorted(topology.nodes)))[:2]
    bottlenecks = [
        min(topology.links[link].capacity for link in path.links)
        for path in simple_paths(topology, src, dst)
    ]
    widest = max(bottlenecks, default=0)
    # Asked in either order first: the widths from one end serve the other.
    first, second = data.draw(st.permutations([(src, dst), (dst, src)]))
    assert static_width(topology, *first) == widest
    assert static_width(topology, *second) == widest
