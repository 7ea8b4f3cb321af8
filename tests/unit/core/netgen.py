"""Random small networks and bookings for property tests, plus brute-force oracles.

The oracles sweep the bookings themselves and enumerate every start instant,
so they share no code with the algorithms they check.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import strategies as st

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.model.topology import Topology, topology_from_dict

HORIZON = 40


@st.composite
def topologies(draw: st.DrawFn, max_nodes: int = 6) -> Topology:
    n = draw(st.integers(2, max_nodes))
    nodes = [f"n{i}" for i in range(n)]
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=2 * n))
    links = [
        {
            "id": f"l{i}",
            "a": a,
            "b": b,
            "capacity": f"{draw(st.integers(1, 10))}bps",
            "latency_ms": draw(st.integers(1, 9)),
        }
        for i, (a, b) in enumerate(chosen)
    ]
    return topology_from_dict({"nodes": [{"id": x} for x in nodes], "links": links})


def simple_paths(topology: Topology, src: str, dst: str) -> Iterator[Path]:
    """Every simple path, parallel links counted apart (fine for tiny graphs)."""

    def walk(node: str, nodes: list[str], links: list[str]) -> Iterator[Path]:
        if node == dst:
            yield Path(tuple(nodes), tuple(links))
            return
        for hop in topology.hops(node):
            if hop.to not in nodes:
                yield from walk(hop.to, [*nodes, hop.to], [*links, hop.link])

    yield from walk(src, [src], [])


@st.composite
def loaded_networks(draw: st.DrawFn, max_bookings: int = 8) -> Network:
    """A random topology with random bookings that fit, some released again."""
    network = Network(draw(topologies()))
    nodes = sorted(network.topology.nodes)
    for i in range(draw(st.integers(0, max_bookings))):
        src, dst = draw(st.permutations(nodes))[:2]
        paths = list(simple_paths(network.topology, src, dst))
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        start = draw(st.integers(0, HORIZON - 1))
        end = draw(st.integers(start + 1, HORIZON))
        booking = Booking(
            f"b{i}",
            start,
            end,
            (Allocation(path, draw(st.integers(1, 6))),),
            symmetric=draw(st.booleans()),
        )
        if not network.shortfall(booking):
            network.commit(booking)
    for booking_id in draw(st.lists(st.sampled_from(sorted(network.bookings) or ["-"]))):
        if booking_id in network.bookings:
            network.release(booking_id)
    return network


def booked(network: Network, link: str, forward: bool, instant: int) -> int:
    """Booked bit/s on one link direction at one instant, from the bookings alone."""
    total = 0
    for booking in network.bookings.values():
        if booking.start <= instant < booking.end:
            for (lk, fw), load in network.loads(booking).items():
                if lk == link and fw == forward:
                    total += load
    return total


def path_free(network: Network, path: Path, start: int, end: int, symmetric: bool) -> int:
    """Bandwidth `path` can still take over [start, end), by brute force."""
    best = None
    for link, forward in path.directions(network.topology):
        capacity = network.topology.links[link].capacity
        sides = (forward, not forward) if symmetric else (forward,)
        for side in sides:
            for t in range(start, end):
                free = capacity - booked(network, link, side, t)
                best = free if best is None else min(best, free)
    return best if best is not None else 0


def feasible(
    network: Network, src: str, dst: str, need: int, start: int, end: int, symmetric: bool = True
) -> bool:
    return any(
        path_free(network, p, start, end, symmetric) >= need
        for p in simple_paths(network.topology, src, dst)
    )
