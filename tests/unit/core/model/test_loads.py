"""`peak_problems`: which link directions go over capacity, where first, and by how much."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given
from hypothesis import strategies as st

from braid.core.model.loads import Direction, LinkLoad, peak_problems

CAPACITY = {"a": 10, "b": 7}


def capacity_of(link: str) -> int | None:
    return CAPACITY.get(link)


loads_strategy = st.lists(
    st.builds(
        lambda link, forward, start, length, bandwidth: LinkLoad(
            link, forward, start, start + length, bandwidth
        ),
        st.sampled_from(["a", "b", "gone"]),
        st.booleans(),
        st.integers(0, 20),
        st.integers(1, 8),
        st.integers(0, 6),
    ),
    max_size=14,
)


def _sweep(loads: list[LinkLoad]) -> list[str]:
    """The plain sweep: every direction's changes sorted, the first level over capacity."""
    events: dict[Direction, list[tuple[int, int]]] = defaultdict(list)
    for load in loads:
        events[load.direction] += [(load.start, load.bandwidth), (load.end, -load.bandwidth)]
    problems = []
    for (link, forward), changes in sorted(events.items()):
        capacity = capacity_of(link)
        if capacity is None:
            problems.append(f"link {link} is not in the topology")
            continue
        level = 0
        for instant, delta in sorted(changes):
            level += delta
            if level > capacity:
                side = "a->b" if forward else "b->a"
                problems.append(
                    f"link {link} {side} would carry {level} > {capacity} bit/s at {instant}"
                )
                break
    return problems


@given(loads_strategy)
def test_the_problems_are_those_of_the_plain_sweep(loads: list[LinkLoad]) -> None:
    assert peak_problems(loads, capacity_of) == _sweep(loads)


@given(loads_strategy)
def test_a_direction_is_reported_when_some_instant_carries_more_than_capacity(
    loads: list[LinkLoad],
) -> None:
    """Checked instant by instant: [start, end) windows, whatever order the loads come in."""
    over = set()
    for link, forward in {load.direction for load in loads}:
        capacity = capacity_of(link)
        mine = [load for load in loads if load.direction == (link, forward)]
        carried = (sum(x.bandwidth for x in mine if x.start <= t < x.end) for t in range(30))
        if capacity is None:
            over.add(f"link {link} is not in the topology")
        elif max(carried) > capacity:
            over.add(f"link {link} {'a->b' if forward else 'b->a'}")
    problems = peak_problems(loads[::-1], capacity_of)
    assert {p.split(" would carry")[0] for p in problems} == over


def test_ends_count_before_starts_at_the_same_instant() -> None:
    back_to_back = [LinkLoad("a", True, 0, 5, 10), LinkLoad("a", True, 5, 9, 10)]
    assert peak_problems(back_to_back, capacity_of) == []


def test_the_first_instant_over_and_the_level_reached_there_are_named() -> None:
    loads = [
        LinkLoad("a", True, 0, 10, 6),
        LinkLoad("a", True, 4, 10, 3),
        LinkLoad("a", True, 6, 8, 2),
        LinkLoad("a", False, 0, 10, 11),
        LinkLoad("nowhere", True, 0, 1, 1),
    ]
    assert peak_problems(loads, capacity_of) == [
        "link a b->a would carry 11 > 10 bit/s at 0",
        "link a a->b would carry 11 > 10 bit/s at 6",
        "link nowhere is not in the topology",
    ]
