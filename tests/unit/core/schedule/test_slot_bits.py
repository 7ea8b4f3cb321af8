"""ALL-SLOTS and earliest start on the numpy scan of all links, against brute force.

`all_slots` scans the links one by one on small networks and short windows
and with numpy (`Stack`) otherwise; these tests build the stack first so the
small random networks of `netgen` go through the vectorised scan too.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.network import Network
from braid.core.model.stack import Stack
from braid.core.model.timeline import Timeline
from braid.core.schedule import all_slots, earliest_start
from tests.unit.core.netgen import HORIZON, feasible, loaded_networks

queries = st.tuples(
    loaded_networks(),
    st.integers(1, 10),
    st.integers(1, 12),
    st.integers(0, HORIZON),
    st.booleans(),
)


def stacked(network: Network) -> Network:
    network.stack()
    assert network.stack_ready()
    return network


def endpoints(network: Network, data: st.DataObject) -> tuple[str, str]:
    src, dst = data.draw(st.permutations(sorted(network.topology.nodes)))[:2]
    return src, dst


@settings(max_examples=150, deadline=None)
@given(queries, st.data())
def test_vectorised_all_slots_is_exactly_the_feasible_starts(
    q: tuple[Network, int, int, int, bool], data: st.DataObject
) -> None:
    network, need, duration, first, symmetric = q
    network = stacked(network)
    src, dst = endpoints(network, data)
    stop = first + data.draw(st.integers(1, 25))
    slots = all_slots(network, src, dst, need, duration, first, stop, symmetric=symmetric)
    for s in range(first - 2, stop + 2):
        expected = first <= s < stop and feasible(
            network, src, dst, need, s, s + duration, symmetric
        )
        assert (s in slots) == expected, s


@settings(max_examples=100, deadline=None)
@given(queries, st.data())
def test_vectorised_earliest_is_the_first_feasible_start(
    q: tuple[Network, int, int, int, bool], data: st.DataObject
) -> None:
    network, need, duration, not_before, symmetric = q
    network = stacked(network)
    src, dst = endpoints(network, data)
    got = earliest_start(network, src, dst, need, duration, not_before, symmetric=symmetric)
    expected = next(
        (
            s
            for s in range(not_before, not_before + HORIZON + 2)
            if feasible(network, src, dst, need, s, s + duration, symmetric)
        ),
        None,
    )
    assert got == expected


bookings = st.lists(
    st.tuples(st.integers(0, 30), st.integers(1, 12), st.integers(1, 5)), max_size=10
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(bookings, min_size=1, max_size=4),
    st.integers(1, 12),
    st.integers(1, 9),
    st.integers(-3, 35),
    st.integers(1, 30),
)
def test_stack_finds_the_blocked_starts_of_each_timeline(
    rows: list[list[tuple[int, int, int]]], need: int, duration: int, lo: int, width: int
) -> None:
    timelines = []
    for row in rows:
        timeline = Timeline(capacity=12)
        for start, length, bandwidth in row:
            if timeline.max_booked(start, start + length) + bandwidth <= 12:
                timeline.book(start, start + length, bandwidth)
        timelines.append(timeline)
    found = Stack(timelines).blocked_starts(range(len(timelines)), need, duration, lo, lo + width)
    for index, timeline in enumerate(timelines):
        expected = timeline.blocked_starts(need, duration, lo, lo + width)
        assert found.get(index, []) == expected, index


@settings(max_examples=200, deadline=None)
@given(
    st.lists(bookings, min_size=1, max_size=4),
    st.integers(-3, 45),
    st.integers(1, 30),
)
def test_stack_reads_the_highest_level_of_each_timeline(
    rows: list[list[tuple[int, int, int]]], start: int, width: int
) -> None:
    timelines = []
    for row in rows:
        timeline = Timeline(capacity=12)
        for begin, length, bandwidth in row:
            if timeline.max_booked(begin, begin + length) + bandwidth <= 12:
                timeline.book(begin, begin + length, bandwidth)
        timelines.append(timeline)
    indices = np.arange(len(timelines), dtype=np.int64)
    highest = Stack(timelines).max_levels(start, start + width, indices).tolist()
    assert highest == [t.max_booked(start, start + width) for t in timelines]
