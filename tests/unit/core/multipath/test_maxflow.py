"""Max flow against networkx (Topology Zoo and random graphs) and its decomposition."""

from __future__ import annotations

import random
from pathlib import Path as FsPath
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path, path_problems
from braid.core.model.topology import topology_from_dict
from braid.core.multipath import MaxFlow, decompose, max_flow, max_flow_value, min_cut
from braid.core.multipath.maxflow import cut_capacity
from braid.core.multipath.residual import successive_widest
from braid.core.planning.invariants import overbooking
from braid.core.schedule import fixed_path
from tests.unit.core.multipath.nets import M, network, nx_digraph
from tests.unit.core.netgen import HORIZON, loaded_networks

ZOO = FsPath(__file__).resolve().parents[4].parent / "shared" / "data" / "topology-zoo"
ZOO_GRAPHS = ["Abilene", "Geant2012", "Kdl", "Cogentco", "Esnet"]


def check_decomposition(
    net: Network, flow: MaxFlow, src: str, dst: str, start: int, end: int, symmetric: bool
) -> None:
    """Paths simple, widest first, summing to the value, and jointly bookable."""
    amounts = [p.amount for p in flow.paths]
    assert sum(amounts) == flow.value
    assert all(a > 0 for a in amounts)
    assert amounts == sorted(amounts, reverse=True)
    for part in flow.paths:
        assert path_problems(net.topology, part.path, src, dst) == []
    links = [link for link, _ in flow.flows]
    assert len(links) == len(set(links)), "a link carries flow both ways"
    if flow.paths:
        allocations = tuple(Allocation(p.path, p.amount) for p in flow.paths)
        booking = Booking("decomposition", start, end, allocations, symmetric)
        assert net.shortfall(booking) == []
        net.commit(booking)
        assert overbooking(net) == []
        net.release("decomposition")


def test_parallel_links_add_up() -> None:
    net = network([("a", "A", "B", 100, 1), ("b", "A", "B", 40, 1), ("c", "B", "C", 500, 1)])
    view = net.window(0, 10)
    flow = max_flow(net.topology, "A", "C", view.usable)
    assert flow.value == 140 * M
    assert [p.amount for p in flow.paths] == [100 * M, 40 * M]
    assert [p.path.links for p in flow.paths] == [("a", "c"), ("b", "c")]


def test_min_cut_leaves_out_loops_and_blocked_chains() -> None:
    # S-A-B-S is a loop no S -> T flow can use, and S-C-D-T is blocked at D-T:
    # the minimum cut is S-T plus the blocked hop, nothing of the loop.
    net = network(
        [
            ("st", "S", "T", 3, 1),
            ("sa", "S", "A", 7, 1),
            ("ab", "A", "B", 9, 1),
            ("bs", "B", "S", 1, 1),
            ("sc", "S", "C", 5, 1),
            ("cd", "C", "D", 5, 1),
            ("dt", "D", "T", 5, 1),
        ]
    )
    blocked = fixed_path(net, "C", "T", 5 * M, 0, 10)
    assert blocked is not None and blocked.links == ("cd", "dt")
    net.commit(Booking("full", 0, 10, (Allocation(blocked, 5 * M),)))
    view = net.window(0, 10)
    value, cut = min_cut(net.topology, "S", "T", view.usable)
    assert value == 3 * M
    assert cut_capacity(cut, view.usable) == value
    assert {hop.link for hop in cut} <= {"st", "sc", "cd", "dt"}


def test_reverse_edges_undo_a_bad_first_path() -> None:
    # The lowest-latency path S-A-B-T blocks both others; without reverse
    # edges one path is all a greedy search finds, the true max flow is two.
    net = network(
        [
            ("sa", "S", "A", 1, 1),
            ("ab", "A", "B", 1, 1),
            ("bt", "B", "T", 1, 1),
            ("sb", "S", "B", 1, 10),
            ("at", "A", "T", 1, 10),
        ]
    )
    view = net.window(0, 10)
    flow = max_flow(net.topology, "S", "T", view.usable)
    assert flow.value == 2 * M
    assert ("ab", True) not in flow.flows and ("ab", False) not in flow.flows
    assert {p.path.links for p in flow.paths} == {("sa", "at"), ("sb", "bt")}
    assert sum(p.amount for p in successive_widest(view, "S", "T", 5)) == 1 * M


def test_directions_are_independent_unless_symmetric() -> None:
    net = network([("l", "A", "B", 100, 1)])
    path = fixed_path(net, "B", "A", 1, 0, 10, symmetric=False)
    assert path is not None
    net.commit(Booking("back", 0, 10, (Allocation(path, 70 * M),), symmetric=False))
    directional = net.window(0, 10, symmetric=False)
    symmetric = net.window(0, 10, symmetric=True)
    topology = net.topology
    assert max_flow_value(topology, "A", "B", directional.usable, symmetric=False) == 100 * M
    assert max_flow_value(topology, "A", "B", symmetric.usable) == 30 * M
    # Symmetric max flow takes the less free direction even from a one-way `usable`.
    assert max_flow_value(topology, "A", "B", directional.usable, symmetric=True) == 30 * M


def test_same_node_has_no_flow() -> None:
    net = network([("l", "A", "B", 100, 1)])
    assert max_flow(net.topology, "A", "A", net.window(0, 1).usable).value == 0


def zoo_network(name: str, rng: random.Random) -> Network:
    graph = nx.read_graphml(ZOO / f"{name}.graphml", force_multigraph=True)
    links = [
        {"id": f"e{i}", "a": str(u), "b": str(v), "capacity": rng.randint(1, 100)}
        for i, (u, v) in enumerate(graph.edges())
        if u != v
    ]
    nodes = [{"id": str(n)} for n in graph.nodes]
    return Network(topology_from_dict({"nodes": nodes, "links": links}))


def book_randomly(net: Network, rng: random.Random, count: int) -> None:
    """Directional bookings along random paths, so the two directions differ."""
    nodes = sorted(net.topology.nodes)
    for i in range(count):
        src, dst = rng.sample(nodes, 2)
        path = fixed_path(net, src, dst, 1, 0, 10, symmetric=False)
        if path is None:
            continue
        room = min(net.timeline(k, f).free(0, 10) for k, f in path.directions(net.topology))
        if room > 0:
            share = rng.randint(1, room)
            net.commit(Booking(f"z{i}", 0, 10, (Allocation(path, share),), symmetric=False))


@pytest.mark.parametrize("name", ZOO_GRAPHS)
def test_matches_networkx_on_topology_zoo(name: str) -> None:
    if not (ZOO / f"{name}.graphml").exists():
        pytest.skip(f"Topology Zoo data not found in {ZOO}")
    rng = random.Random(f"braid-{name}")
    net = zoo_network(name, rng)
    book_randomly(net, rng, 15)
    nodes = sorted(net.topology.nodes)
    for _ in range(4):
        src, dst = rng.sample(nodes, 2)
        for symmetric in (True, False):
            view = net.window(0, 10, symmetric=symmetric)
            expected = nx.maximum_flow_value(nx_digraph(net.topology, view.usable), src, dst)
            flow = max_flow(net.topology, src, dst, view.usable, symmetric=symmetric)
            assert flow.value == expected
            check_decomposition(net, flow, src, dst, 0, 10, symmetric)


@settings(max_examples=120, deadline=None)
@given(loaded_networks(), st.data())
def test_matches_networkx_on_random_graphs(net: Network, data: Any) -> None:
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    start = data.draw(st.integers(0, HORIZON - 1))
    end = data.draw(st.integers(start + 1, HORIZON))
    symmetric = data.draw(st.booleans())
    view = net.window(start, end, symmetric=symmetric)
    expected = nx.maximum_flow_value(nx_digraph(net.topology, view.usable), src, dst)
    flow = max_flow(net.topology, src, dst, view.usable, symmetric=symmetric)
    value = max_flow_value(net.topology, src, dst, view.usable, symmetric=symmetric)
    assert flow.value == expected == value
    # Max-flow min-cut: the cut found is saturated, so its capacity is the value.
    cut_value, cut = min_cut(net.topology, src, dst, view.usable, symmetric=symmetric)
    assert cut_capacity(cut, view.usable) == cut_value == value
    check_decomposition(net, flow, src, dst, start, end, symmetric)


@settings(max_examples=120, deadline=None)
@given(loaded_networks(), st.data())
def test_the_first_paths_are_those_the_whole_decomposition_starts_with(
    net: Network, data: Any
) -> None:
    """A split over k paths peels only k; a later caller goes on to the same paths."""
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    start = data.draw(st.integers(0, HORIZON - 1))
    end = data.draw(st.integers(start + 1, HORIZON))
    symmetric = data.draw(st.booleans())
    counts = data.draw(st.lists(st.integers(0, 6), max_size=3))
    usable = net.window(start, end, symmetric=symmetric).usable
    whole = decompose(
        net.topology,
        src,
        dst,
        max_flow(net.topology, src, dst, usable, symmetric=symmetric).flows,
        max_flow_value(net.topology, src, dst, usable, symmetric=symmetric),
    )
    flow = max_flow(net.topology, src, dst, usable, symmetric=symmetric)
    for count in counts:
        assert flow.first_paths(count) == whole[:count]
    assert flow.paths == whole
    assert all(flow.first_paths(count) == whole[:count] for count in range(len(whole) + 2))


@st.composite
def lines(draw: st.DrawFn) -> Network:
    """A chain of nodes with side branches (dead ends and loops), randomly booked: the
    pairs along it have one way between them, which max flow reads without Dinic."""
    count = draw(st.integers(2, 6))
    links = [(f"l{i}", f"n{i}", f"n{i + 1}", draw(st.integers(1, 9)), 1.0) for i in range(count)]
    for j in range(draw(st.integers(0, 3))):  # a dead end, or a loop back onto the chain
        at = draw(st.integers(0, count))
        to = draw(st.sampled_from([f"x{j}", f"n{at}"]))
        links.append((f"side{j}", f"n{at}", to if to != f"n{at}" else f"x{j}", 9, 1.0))
    if draw(st.booleans()):  # a parallel link: two ways, Dinic again
        links.append(("twin", "n0", "n1", draw(st.integers(1, 9)), 1.0))
    net = network(links)
    for i in range(draw(st.integers(0, 5))):
        a, b = sorted(draw(st.permutations(range(count + 1)))[:2])
        hops = [f"l{k}" for k in range(a, b)]
        path = Path(tuple(f"n{k}" for k in range(a, b + 1)), tuple(hops))
        booking = Booking(f"b{i}", 0, 10, (Allocation(path, draw(st.integers(1, 3)) * M),))
        symmetric = draw(st.booleans())
        booking = Booking(booking.id, 0, draw(st.integers(1, 10)), booking.allocations, symmetric)
        if not net.shortfall(booking):
            net.commit(booking)
    return net


@settings(max_examples=200, deadline=None)
@given(lines(), st.data())
def test_a_line_s_max_flow_is_its_narrowest_link_as_networkx_finds(net: Network, data: Any) -> None:
    nodes = sorted(net.topology.nodes)
    src, dst = data.draw(st.permutations(nodes))[:2]
    symmetric = data.draw(st.booleans())
    view = net.window(0, data.draw(st.integers(1, 10)), symmetric=symmetric)
    expected = nx.maximum_flow_value(nx_digraph(net.topology, view.usable), src, dst)
    assert max_flow_value(net.topology, src, dst, view.usable, symmetric=symmetric) == expected
    assert max_flow(net.topology, src, dst, view.usable, symmetric=symmetric).value == expected
