import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.model.timeline import OverbookingError, Timeline

ops = st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(1, 4)), max_size=12)


def naive(bookings: list[tuple[int, int, int]], horizon: int = 40) -> list[int]:
    levels = [0] * horizon
    for start, end, bw in bookings:
        for t in range(start, end):
            levels[t] += bw
    return levels


@given(ops, st.data())
def test_levels_match_a_per_second_array(
    raw: list[tuple[int, int, int]], data: st.DataObject
) -> None:
    timeline = Timeline(capacity=10**6)
    kept: list[tuple[int, int, int]] = []
    for start, length, bw in raw:
        timeline.book(start, start + length, bw)
        kept.append((start, start + length, bw))
    for item in data.draw(st.lists(st.sampled_from(kept), unique=True)) if kept else []:
        timeline.release(*item)
        kept.remove(item)
    levels = naive(kept)
    for t in range(40):
        assert timeline.level_at(t) == levels[t]
    for start in range(0, 35, 3):
        for end in range(start + 1, 40, 4):
            assert timeline.max_booked(start, end) == max(levels[start:end])


def test_two_identical_bookings_at_the_same_second_are_two_bookings() -> None:
    timeline = Timeline(capacity=10)
    timeline.book(5, 10, 4)
    timeline.book(5, 10, 4)
    assert timeline.max_booked(5, 10) == 8
    with pytest.raises(OverbookingError):
        timeline.book(5, 10, 4)
    timeline.release(5, 10, 4)
    assert timeline.max_booked(0, 100) == 4


def test_half_open_windows_touch_without_overlap() -> None:
    timeline = Timeline(capacity=10)
    timeline.book(0, 10, 10)
    timeline.book(10, 20, 10)
    assert timeline.free(9, 10) == 0 and timeline.free(20, 30) == 10


def test_release_compacts_breakpoints() -> None:
    timeline = Timeline(capacity=10)
    timeline.book(0, 10, 3)
    timeline.book(5, 15, 3)
    timeline.release(5, 15, 3)
    timeline.release(0, 10, 3)
    assert len(timeline) == 0


def test_overbooking_refused_and_nothing_changed() -> None:
    timeline = Timeline(capacity=10)
    timeline.book(0, 10, 7)
    with pytest.raises(OverbookingError):
        timeline.book(5, 15, 4)
    assert timeline.max_booked(10, 15) == 0


@given(ops, st.integers(1, 8), st.integers(1, 10))
def test_feasible_starts_by_enumeration(
    raw: list[tuple[int, int, int]], need: int, duration: int
) -> None:
    timeline = Timeline(capacity=8)
    kept = []
    for start, length, bw in raw:
        if timeline.max_booked(start, start + length) + bw <= 8:
            timeline.book(start, start + length, bw)
            kept.append((start, start + length, bw))
    levels = naive(kept, 60)
    starts = timeline.feasible_starts(need, duration, 0, 30)
    for s in range(0, 30):
        fits = all(8 - levels[t] >= need for t in range(s, s + duration))
        assert (s in starts) == fits, s


@given(ops, st.integers(-2, 40), st.integers(1, 40))
def test_drops_are_the_instants_where_the_level_falls(
    raw: list[tuple[int, int, int]], start: int, width: int
) -> None:
    timeline = Timeline(capacity=10**6)
    for begin, length, bw in raw:
        timeline.book(begin, begin + length, bw)
    levels = naive([(b, b + n, bw) for b, n, bw in raw], horizon=45)

    def level(t: int) -> int:
        return levels[t] if 0 <= t < len(levels) else 0

    end = start + width
    expected = [t for t in range(start + 1, end) if level(t) < level(t - 1)]
    assert timeline.drops(start, end) == expected
    following = next((t for t in range(start + 1, 46) if level(t) < level(t - 1)), None)
    assert timeline.next_drop(start) == following
