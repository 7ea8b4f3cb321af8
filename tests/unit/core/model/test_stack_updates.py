"""The stack follows bookings and releases row by row, and stays exact.

A stack built once and then only told which rows changed must answer every
scan as a stack built afresh does, and as the timelines themselves do; rows
that outgrow their slots move, and the arrays are laid out again.
"""

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.stack import Stack
from braid.core.model.timeline import Timeline
from braid.core.schedule import all_slots
from tests.unit.core.netgen import HORIZON, feasible, simple_paths, topologies

CAPACITY = 12

# ("book", row, start, length, bandwidth), ("release", pick) or ("scan", need, duration, lo, width).
books = st.tuples(
    st.just("book"), st.integers(0, 2), st.integers(-5, 60), st.integers(1, 20), st.integers(1, 6)
)
releases = st.tuples(st.just("release"), st.integers(0, 1000))
scans = st.tuples(
    st.just("scan"), st.integers(0, 13), st.integers(1, 15), st.integers(-8, 60), st.integers(1, 40)
)
steps = st.lists(st.one_of(books, books, releases, scans), min_size=1, max_size=60)


def check_scan(stack: Stack, timelines: list[Timeline], scan: tuple[int, int, int, int]) -> None:
    need, duration, lo, width = scan
    rows = list(range(len(timelines)))
    found = stack.blocked_starts(rows, need, duration, lo, lo + width)
    fresh = Stack(timelines).blocked_starts(rows, need, duration, lo, lo + width)
    assert found == fresh
    for row, timeline in enumerate(timelines):
        assert found.get(row, []) == timeline.blocked_starts(need, duration, lo, lo + width)
    highest = stack.max_levels(lo, lo + width, np.array(rows, dtype=np.int64)).tolist()
    assert highest == [t.max_booked(lo, lo + width) for t in timelines]
    for row, timeline in enumerate(timelines):  # read just now, so each row is up to date
        at, times, levels = int(stack.offsets[row]), *timeline.arrays()
        assert stack.times[at : at + len(timeline)].tolist() == times.tolist()
        assert stack.levels[at : at + len(timeline)].tolist() == levels.tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3), steps)
def test_a_touched_stack_scans_like_a_fresh_one(count: int, plan: list[tuple[Any, ...]]) -> None:
    timelines = [Timeline(CAPACITY) for _ in range(count)]
    stack = Stack(timelines)
    held: list[tuple[int, int, int, int]] = []
    for step in plan:
        if step[0] == "book":
            _, row, start, length, bandwidth = step
            row %= count
            timeline = timelines[row]
            if timeline.max_booked(start, start + length) + bandwidth <= CAPACITY:
                timeline.book(start, start + length, bandwidth)
                stack.touch([row], start, start + length)
                held.append((row, start, start + length, bandwidth))
        elif step[0] == "release" and held:
            row, start, end, bandwidth = held.pop(step[1] % len(held))
            timelines[row].release(start, end, bandwidth)
            stack.touch([row], start, end)
        elif step[0] == "scan":
            check_scan(stack, timelines, step[1:])
    check_scan(stack, timelines, (CAPACITY // 2, 3, -8, 80))


def test_a_row_that_outgrows_its_slot_moves_and_the_arrays_are_laid_out_again() -> None:
    timelines = [Timeline(10**6), Timeline(10**6)]
    stack = Stack(timelines)
    for k in range(300):
        timelines[0].book(3 * k, 3 * k + 2, 1 + k % 7)
        stack.touch([0], 3 * k, 3 * k + 2)
        if k % 13 == 0:
            check_scan(stack, timelines, (10**6 - 3, 2, 0, 3 * k + 5))
    check_scan(stack, timelines, (10**6 - 3, 2, 0, 1000))


@st.composite
def changes(draw: st.DrawFn) -> tuple[Network, list[tuple[str, object]]]:
    """A network and a mix of bookings to try, releases and queries, in order."""
    network = Network(draw(topologies()))
    nodes = sorted(network.topology.nodes)
    plan: list[tuple[str, object]] = []
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["book", "book", "release", "query"]))
        src, dst = draw(st.permutations(nodes))[:2]
        if kind == "book":
            paths = list(simple_paths(network.topology, src, dst))
            if paths:
                start = draw(st.integers(0, HORIZON - 1))
                allocation = Allocation(draw(st.sampled_from(paths)), draw(st.integers(1, 6)))
                end = draw(st.integers(start + 1, HORIZON))
                symmetric = draw(st.booleans())
                plan.append((kind, Booking(f"b{i}", start, end, (allocation,), symmetric)))
        elif kind == "release":
            plan.append((kind, draw(st.integers(0, 100))))
        else:
            need, duration = draw(st.integers(1, 10)), draw(st.integers(1, 12))
            first = draw(st.integers(0, HORIZON))
            query = (src, dst, need, duration, first, first + draw(st.integers(1, 20)))
            plan.append((kind, (*query, draw(st.booleans()))))
    return network, plan


@settings(max_examples=120, deadline=None)
@given(changes())
def test_all_slots_on_a_followed_stack_matches_brute_force(
    case: tuple[Network, list[tuple[str, object]]],
) -> None:
    network, plan = case
    network.stack()  # built first: every later change only touches rows
    for kind, what in plan:
        if kind == "book":
            assert isinstance(what, Booking)
            if not network.shortfall(what):
                network.commit(what)
        elif kind == "release" and network.bookings:
            assert isinstance(what, int)
            names = sorted(network.bookings)
            network.release(names[what % len(names)])
        elif kind == "query":
            assert isinstance(what, tuple)
            src, dst, need, duration, first, stop, symmetric = what
            assert network.stack_ready()
            slots = all_slots(network, src, dst, need, duration, first, stop, symmetric=symmetric)
            for s in range(first, stop):
                expected = feasible(network, src, dst, need, s, s + duration, symmetric)
                assert (s in slots) == expected, s
