from hypothesis import given
from hypothesis import strategies as st

from braid.core.model.intervals import IntervalSet

spans = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=6)


def members(s: IntervalSet) -> set[int]:
    return {t for a, b in s for t in range(a, b)}


def raw(spans_: list[tuple[int, int]]) -> set[int]:
    return {t for a, b in spans_ for t in range(a, b)}


@given(spans)
def test_of_normalises_to_sorted_disjoint_non_touching(s: list[tuple[int, int]]) -> None:
    result = IntervalSet.of(s)
    assert members(result) == raw(s)
    for (_, end), (start, _) in zip(result.spans, result.spans[1:], strict=False):
        assert end < start


@given(spans, spans)
def test_union_intersection_difference_match_sets(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> None:
    x, y = IntervalSet.of(a), IntervalSet.of(b)
    assert members(x.union(y)) == raw(a) | raw(b)
    assert members(x.intersection(y)) == raw(a) & raw(b)
    assert members(x.difference(y)) == raw(a) - raw(b)
    assert x.intersection(y) == IntervalSet.of(x.intersection(y).spans)


def test_semiring_identities() -> None:
    x = IntervalSet.of([(1, 4), (6, 9)])
    assert x.union(IntervalSet()) == x
    assert x.intersection(IntervalSet.span(0, 100)) == x
    assert x.intersection(IntervalSet()) == IntervalSet()
    assert 3 in x and 4 not in x and x.first() == 1 and x.measure() == 6
