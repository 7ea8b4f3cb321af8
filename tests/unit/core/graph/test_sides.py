"""Sides and walls found once in a window serve every later ask, and dead ends are skipped.

A refused search leaves the side it explored in the window's memo; the
walls built from it must be the walls a fresh search finds. Searches skip
nodes no simple path between the ends visits: their answers must be those
of the same search over every node.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.graph.search import shortest_feasible_path, widest_path, widest_width
from braid.core.graph.sides import Wall, known_side, nearer_wall, walled_in
from braid.core.model.network import Network, WindowView
from braid.core.model.timeline import Timeline
from braid.core.schedule.walls import _fit_one
from tests.unit.core.netgen import HORIZON, loaded_networks

windows = st.tuples(st.integers(0, HORIZON), st.integers(1, 12))


def _hops(wall: Wall | None) -> set[tuple[str, str, bool, int]] | None:
    return None if wall is None else {(hop.link, hop.to, hop.forward, width) for hop, width in wall}


@settings(max_examples=200, deadline=None)
@given(loaded_networks(), st.integers(1, 10), windows, st.booleans(), st.data())
def test_a_remembered_side_gives_the_wall_a_fresh_search_finds(
    network: Network, need: int, window: tuple[int, int], symmetric: bool, data: st.DataObject
) -> None:
    src, dst = data.draw(st.permutations(sorted(network.topology.nodes)))[:2]
    topology = network.topology
    start, length = window
    shared = network.window(start, start + length, symmetric=symmetric)
    path = shortest_feasible_path(topology, src, dst, shared.usable, need)
    remembered = [
        known_side(shared.usable, (src, dst), need, True),
        known_side(shared.usable, (dst, src), need, False),
    ]
    if path is not None:
        assert remembered == [None, None]
        return
    assert remembered != [None, None]  # the refused search left its side
    for ends, out in (((src, dst), True), ((dst, src), False)):
        fresh = WindowView(network, start, start + length, symmetric)  # an empty memo
        expected = walled_in(topology, ends, fresh.usable, need, out=out)
        assert _hops(walled_in(topology, ends, shared.usable, need, out=out)) == _hops(expected)
    wall = nearer_wall(topology, (src, dst), shared.usable, need)
    fresh = WindowView(network, start, start + length, symmetric)
    assert wall is not None and nearer_wall(topology, (src, dst), fresh.usable, need) is not None


@settings(max_examples=200, deadline=None)
@given(loaded_networks(), windows, st.booleans(), st.data())
def test_skipping_dead_ends_or_the_path_finds_the_same_widest(
    network: Network, window: tuple[int, int], symmetric: bool, data: st.DataObject
) -> None:
    src, dst = data.draw(st.permutations(sorted(network.topology.nodes)))[:2]
    start, length = window
    usable = WindowView(network, start, start + length, symmetric).usable
    topology = network.topology
    found = widest_path(topology, src, dst, usable)
    assert found == widest_path(topology, src, dst, usable, skip_dead_ends=False)
    assert widest_width(topology, src, dst, usable) == (found[1] if found else 0)


def _first_fit_by_brute_force(timeline: Timeline, limit: int, duration: int, start: int) -> int:
    s = start
    while any(timeline.level_at(t) > limit for t in range(s, s + duration)):
        s += 1
    return s


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 10), st.integers(1, 5)), max_size=8),
    st.integers(0, 9),
    st.integers(1, 8),
    st.integers(0, 35),
    st.integers(1, 40),
)
def test_one_timeline_fits_where_brute_force_says(
    bookings: list[tuple[int, int, int]], limit: int, duration: int, start: int, width: int
) -> None:
    timeline = Timeline(10)
    for begin, length, amount in bookings:
        if timeline.max_booked(begin, begin + length) + amount <= 10:
            timeline.book(begin, begin + length, amount)
    until = start + width
    found = _fit_one(timeline, limit, duration, start, until)
    expected = _first_fit_by_brute_force(timeline, limit, duration, start)
    if expected < until:
        assert found == expected
    else:
        assert until <= found <= expected  # no start before it fits
