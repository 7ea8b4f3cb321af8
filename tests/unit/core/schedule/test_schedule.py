"""The four queries against brute force: every start instant, every simple path."""

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.topology import topology_from_dict
from braid.core.planning.invariants import booking_problems
from braid.core.schedule import all_slots, earliest_start, fixed_path, widest
from tests.unit.core.netgen import HORIZON, feasible, loaded_networks, path_free, simple_paths

queries = st.tuples(
    loaded_networks(),
    st.integers(1, 10),
    st.integers(1, 12),
    st.integers(0, HORIZON),
    st.booleans(),
)


def endpoints(network: Network, data: st.DataObject) -> tuple[str, str]:
    src, dst = data.draw(st.permutations(sorted(network.topology.nodes)))[:2]
    return src, dst


@settings(max_examples=150, deadline=None)
@given(queries, st.data())
def test_fixed_matches_brute_force(
    q: tuple[Network, int, int, int, bool], data: st.DataObject
) -> None:
    network, need, duration, start, symmetric = q
    src, dst = endpoints(network, data)
    path = fixed_path(network, src, dst, need, start, start + duration, symmetric=symmetric)
    assert (path is not None) == feasible(
        network, src, dst, need, start, start + duration, symmetric
    )
    if path is not None:
        booking = Booking("new", start, start + duration, (Allocation(path, need),), symmetric)
        assert booking_problems(network.topology, booking, src, dst) == []
        assert network.shortfall(booking) == []


@settings(max_examples=150, deadline=None)
@given(queries, st.data())
def test_widest_matches_brute_force(
    q: tuple[Network, int, int, int, bool], data: st.DataObject
) -> None:
    network, _, duration, start, symmetric = q
    src, dst = endpoints(network, data)
    best = max(
        (
            path_free(network, p, start, start + duration, symmetric)
            for p in simple_paths(network.topology, src, dst)
        ),
        default=0,
    )
    found = widest(network, src, dst, start, start + duration, symmetric=symmetric)
    assert (found[1] if found else 0) == best
    if found:
        assert path_free(network, found[0], start, start + duration, symmetric) == best


@settings(max_examples=150, deadline=None)
@given(queries, st.data())
def test_all_slots_is_exactly_the_feasible_starts(
    q: tuple[Network, int, int, int, bool], data: st.DataObject
) -> None:
    network, need, duration, first, symmetric = q
    src, dst = endpoints(network, data)
    stop = first + data.draw(st.integers(1, 25))
    slots = all_slots(network, src, dst, need, duration, first, stop, symmetric=symmetric)
    for s in range(first - 2, stop + 2):
        expected = first <= s < stop and feasible(
            network, src, dst, need, s, s + duration, symmetric
        )
        assert (s in slots) == expected, s


@settings(max_examples=150, deadline=None)
@given(queries, st.data())
def test_earliest_is_the_first_feasible_start(
    q: tuple[Network, int, int, int, bool], data: st.DataObject
) -> None:
    network, need, duration, not_before, symmetric = q
    src, dst = endpoints(network, data)
    not_after = data.draw(
        st.none() | st.integers(not_before + duration, not_before + duration + 30)
    )
    got = earliest_start(
        network, src, dst, need, duration, not_before, not_after, symmetric=symmetric
    )
    last = not_after - duration if not_after is not None else not_before + HORIZON + 1
    expected = next(
        (
            s
            for s in range(not_before, last + 1)
            if feasible(network, src, dst, need, s, s + duration, symmetric)
        ),
        None,
    )
    assert got == expected


def line() -> Network:
    topology = topology_from_dict(
        {
            "nodes": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
            "links": [
                {"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1},
                {"id": "BC", "a": "B", "b": "C", "capacity": 10, "latency_ms": 1},
            ],
        }
    )
    return Network(topology)


def test_earliest_waits_for_the_booking_that_blocks() -> None:
    network = line()
    path = fixed_path(network, "A", "C", 8 * 10**6, 100, 200)
    assert path is not None
    network.commit(Booking("x", 100, 200, (Allocation(path, 8 * 10**6),)))
    assert earliest_start(network, "A", "C", 5 * 10**6, 50, 60) == 200
    assert earliest_start(network, "A", "C", 5 * 10**6, 40, 60) == 60
    assert earliest_start(network, "A", "C", 5 * 10**6, 50, 60, not_after=240) is None
    assert earliest_start(network, "A", "C", 11 * 10**6, 50, 60) is None


def test_open_ended_booking_does_not_hide_later_starts() -> None:
    network = line()
    path = fixed_path(network, "A", "C", 1, 0, 10)
    assert path is not None
    from braid.core.model.units import FOREVER

    network.commit(Booking("open", 1000, FOREVER, (Allocation(path, 6 * 10**6),)))
    network.commit(Booking("short", 0, 500, (Allocation(path, 8 * 10**6),)))
    mbps = 10**6
    assert earliest_start(network, "A", "C", 3 * mbps, 600, 0) == 500
    assert earliest_start(network, "A", "C", 5 * mbps, 100, 0) == 500
    assert earliest_start(network, "A", "C", 5 * mbps, 600, 0) is None
    assert earliest_start(network, "A", "C", 4 * mbps, 600, 2000) == 2000


def test_directional_booking_leaves_the_reverse_free() -> None:
    network = line()
    path = fixed_path(network, "A", "C", 10 * 10**6, 0, 10, symmetric=False)
    assert path is not None
    network.commit(Booking("one-way", 0, 10, (Allocation(path, 10 * 10**6),), symmetric=False))
    assert fixed_path(network, "C", "A", 10 * 10**6, 0, 10, symmetric=False) is not None
    assert fixed_path(network, "C", "A", 1, 0, 10, symmetric=True) is None
