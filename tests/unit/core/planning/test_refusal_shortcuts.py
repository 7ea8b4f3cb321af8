"""The shortcuts behind a refusal's alternatives answer exactly as the full searches do.

Walls of full links let the earliest-start search jump over refused starts;
a cut near either end bounds the max flow before Dinic runs; one window view
serves every search of the same window until the network changes. Each is
checked here against brute force or against the search it stands in for.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.graph.reach import static_width
from braid.core.graph.search import UNBOUNDED, widest_path
from braid.core.graph.sides import nearer_wall, walled_in
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network, WindowView
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.multipath.maxflow import flow_ceiling, max_flow_value
from braid.core.planning.decisions import Decision, Refused
from braid.core.planning.planner import Planner
from braid.core.planning.requests import parse_request
from braid.core.schedule import fixed_path
from braid.core.schedule.walls import skip_walls
from tests.unit.core.netgen import HORIZON, feasible, loaded_networks


def ends_of(network: Network, data: st.DataObject) -> tuple[str, str]:
    src, dst = data.draw(st.permutations(sorted(network.topology.nodes)))[:2]
    return src, dst


def first_feasible(
    network: Network, ends: tuple[str, str], need: int, duration: int, span: range, symmetric: bool
) -> int | None:
    src, dst = ends
    return next(
        (s for s in span if feasible(network, src, dst, need, s, s + duration, symmetric)), None
    )


@settings(max_examples=300, deadline=None)
@given(
    loaded_networks(max_bookings=24),
    st.integers(1, 10),
    st.integers(1, 12),
    st.integers(0, HORIZON),
    st.integers(1, HORIZON + 5),
    st.booleans(),
    st.integers(1, 2),
    st.data(),
)
def test_walls_jump_only_over_refused_starts(
    network: Network,
    need: int,
    duration: int,
    lo: int,
    width: int,
    symmetric: bool,
    jumps: int,
    data: st.DataObject,
) -> None:
    ends = ends_of(network, data)
    need = 1 + need % max(static_width(network.topology, *ends), 1)  # mostly one that may fit
    stop = lo + width
    start, settled = skip_walls(
        network, ends, need, duration, lo, stop, symmetric=symmetric, jumps=jumps
    )
    expected = first_feasible(network, ends, need, duration, range(lo, stop), symmetric)
    if settled:
        assert start == expected
    else:
        assert start is not None and lo <= start < stop
        assert expected is None or start <= expected


def reaches(topology: Topology, ends: tuple[str, str], closed: set[tuple[str, bool]]) -> bool:
    """Whether some walk joins the ends over hops (link, direction) not `closed`."""
    src, dst = ends
    seen, todo = {src}, [src]
    while todo:
        node = todo.pop()
        for hop in topology.hops(node):
            if hop.to not in seen and (hop.link, hop.forward) not in closed:
                seen.add(hop.to)
                todo.append(hop.to)
    return dst in seen


@settings(max_examples=150, deadline=None)
@given(
    loaded_networks(),
    st.integers(1, 10),
    st.integers(0, HORIZON),
    st.integers(1, 12),
    st.booleans(),
    st.data(),
)
def test_a_wall_is_a_cut_of_hops_without_room(
    network: Network, need: int, start: int, length: int, symmetric: bool, data: st.DataObject
) -> None:
    src, dst = ends_of(network, data)
    topology = network.topology
    usable = WindowView(network, start, start + length, symmetric).usable
    path = fixed_path(network, src, dst, need, start, start + length, symmetric=symmetric)
    walls = [
        walled_in(topology, (src, dst), usable, need, out=True),
        walled_in(topology, (dst, src), usable, need, out=False),
        nearer_wall(topology, (src, dst), usable, need),
    ]
    for wall in walls:
        assert (wall is None) == (path is not None)
        if wall is None:
            continue
        assert all(width == usable(hop) < need for hop, width in wall)
        closed = {(hop.link, hop.forward) for hop, _ in wall}
        assert not reaches(topology, (src, dst), closed)


@settings(max_examples=150, deadline=None)
@given(
    loaded_networks(),
    st.integers(1, 12),
    st.integers(0, HORIZON),
    st.integers(1, 12),
    st.booleans(),
    st.data(),
)
def test_the_ceiling_bounds_the_max_flow(
    network: Network, need: int, start: int, length: int, symmetric: bool, data: st.DataObject
) -> None:
    src, dst = ends_of(network, data)
    topology = network.topology
    usable = WindowView(network, start, start + length, symmetric).usable
    flow = max_flow_value(topology, src, dst, usable, symmetric=symmetric)
    ceiling = flow_ceiling(topology, src, dst, usable, need, symmetric=symmetric)
    assert ceiling >= flow
    if fixed_path(network, src, dst, need, start, start + length, symmetric=symmetric):
        assert ceiling == UNBOUNDED


def test_a_view_is_shared_until_the_network_changes() -> None:
    network = Network(_two_nodes())
    view = network.window(0, 10)
    hop = network.topology.hops("A")[0]
    assert view.usable(hop) == 10
    assert network.window(0, 10) is view
    assert network.window(0, 10, symmetric=False) is not view
    path = fixed_path(network, "A", "B", 4, 0, 10)
    assert path is not None
    network.commit(Booking("b", 5, 8, (Allocation(path, 4),)))
    fresh = network.window(0, 10)
    assert fresh is not view and fresh.usable(hop) == 6
    network.release("b")
    assert network.window(0, 10).usable(hop) == 10


def _two_nodes() -> Topology:
    return topology_from_dict(
        {
            "nodes": [{"id": "A"}, {"id": "B"}],
            "links": [{"id": "AB", "a": "A", "b": "B", "capacity": "10bps", "latency_ms": 1}],
        }
    )


requests = st.lists(
    st.tuples(
        st.integers(0, 10**6),  # picks the bandwidth, up to what a path could carry
        st.integers(0, HORIZON),  # start
        st.integers(1, 12),  # length
        st.booleans(),  # symmetric
        st.integers(0, 10**6),  # picks the ends
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=250, deadline=None)
@given(loaded_networks(), requests)
def test_a_refusal_reports_what_the_full_searches_find(
    network: Network, asks: list[tuple[int, int, int, bool, int]]
) -> None:
    planner = Planner(network.topology)
    planner.network = network
    nodes = sorted(network.topology.nodes)
    for i, (size, start, length, symmetric, pick) in enumerate(asks):
        src = nodes[pick % len(nodes)]
        dst = nodes[(pick // len(nodes)) % len(nodes)]
        widest = static_width(network.topology, src, dst)
        if src == dst or widest == 0:
            continue
        need = 1 + size % widest
        fields = {"id": f"q{i}", "src": src, "dst": dst, "start": start, "end": start + length}
        request = parse_request(
            {**fields, "bandwidth": f"{need}bps", "directional": not symmetric}, network.topology
        )
        decision, staged = planner.decide(request)
        if staged is not None:
            network.commit(staged)
            continue
        check_refusal(network, decision, (src, dst), need, (start, start + length), symmetric)


def check_refusal(
    network: Network,
    decision: Decision,
    ends: tuple[str, str],
    need: int,
    window: tuple[int, int],
    symmetric: bool,
) -> None:
    src, dst = ends
    start, end = window
    topology = network.topology
    assert isinstance(decision, Refused) and decision.alternatives is not None
    alternatives = decision.alternatives
    span = range(start, start + 2 * HORIZON + 14)
    assert alternatives.earliest_start == first_feasible(
        network, ends, need, end - start, span, symmetric
    )
    fresh = WindowView(network, start, end, symmetric)  # not the network's shared one
    flow = max_flow_value(topology, src, dst, fresh.usable, symmetric=symmetric)
    assert (alternatives.max_flow is not None) == (flow >= need)
    widest = widest_path(topology, src, dst, WindowView(network, start, end, symmetric).usable)
    assert alternatives.max_bandwidth == (widest[1] if widest else 0)
    if alternatives.max_flow is not None:
        assert alternatives.max_flow == flow


def test_a_full_link_between_two_nodes_is_their_wall() -> None:
    network = Network(_two_nodes())
    hop = network.topology.hops("A")[0]
    usable = network.window(0, 5).usable
    assert walled_in(network.topology, ("A", "B"), usable, 11) == [(hop, 10)]
    assert nearer_wall(network.topology, ("A", "B"), usable, 10) is None
