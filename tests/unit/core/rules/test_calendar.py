"""Labels over time: no two overlapping reservations share a VLAN on a link, or a group id."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.rules.calendar import Assigned, LabelCalendar, NoFreeLabelError

LINKS = ["ab", "bc", "cd", "ad"]
SPANS = {"ab": ((10, 13),), "bc": ((11, 19),), "cd": ((1, 4094),), "ad": ((10, 11),)}
RANGES = {link: {v for lo, hi in s for v in range(lo, hi + 1)} for link, s in SPANS.items()}

paths_st = st.lists(
    st.lists(st.sampled_from(LINKS), min_size=1, max_size=3, unique=True), min_size=1, max_size=2
)
# Now and then a long window, so that the longest use bounds fewer overlap checks.
window_st = st.tuples(st.integers(0, 50), st.one_of(st.integers(1, 30), st.integers(100, 400))).map(
    lambda t: (t[0], t[0] + t[1])
)

Held = dict[str, tuple[list[list[str]], tuple[int, int], Assigned]]


def lowest_free_vlans(
    held: Held, window: tuple[int, int], paths: list[list[str]]
) -> tuple[int, ...] | None:
    """The labels `assign` must give, found by reading every held reservation."""
    taken = {
        (link, vlan)
        for other_paths, other, labels in held.values()
        if other[0] < window[1] and window[0] < other[1]
        for links, vlan in zip(other_paths, labels.vlans, strict=True)
        for link in links
    }
    chosen: list[int] = []
    for links in paths:
        allowed = set.intersection(*(RANGES[link] for link in links))
        free = [
            v
            for v in sorted(allowed)
            if v not in chosen and not any((link, v) in taken for link in links)
        ]
        if not free:
            return None
        chosen.append(free[0])
    return tuple(chosen)


def test_lowest_free_vlan_per_path_and_distinct_within_a_reservation() -> None:
    calendar = LabelCalendar(vlan_spans=SPANS)
    first = calendar.assign("r1", (0, 10), [["ab", "bc"], ["ab"]], 2)
    assert first.vlans == (11, 10)
    calendar.record("r1", (0, 10), [["ab", "bc"], ["ab"]], first)
    second = calendar.assign("r2", (5, 15), [["ab"]], 2)
    assert second.vlans == (12,)
    assert not set(second.group_ids) & set(first.group_ids)
    later = calendar.assign("r3", (10, 20), [["ab", "bc"]], 2)
    assert later.vlans == (11,)  # r1 has ended by then: [0, 10) is half-open


def test_exhaustion_names_the_link_and_release_frees() -> None:
    calendar = LabelCalendar(vlan_spans=SPANS)
    for owner in ("r1", "r2"):
        labels = calendar.assign(owner, (0, 10), [["ad"]], 1)
        calendar.record(owner, (0, 10), [["ad"]], labels)
    with pytest.raises(NoFreeLabelError) as caught:
        calendar.assign("r3", (5, 6), [["ad"]], 1)
    assert caught.value.field == "links.ad.vlans"
    calendar.release("r1")
    assert calendar.assign("r3", (5, 6), [["ad"]], 1).vlans == (10,)


def test_assigned_labels_refuse_a_different_shape() -> None:
    labels = Assigned((10, 11), (7, 8))
    assert labels.take(2, 2) == ((10, 11), (7, 8))
    with pytest.raises(ValueError, match="assigned 2 VLANs"):
        labels.take(3, 2)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            paths_st, window_st, st.integers(1, 4), st.sampled_from(["keep", "release", "move"])
        ),
        min_size=1,
        max_size=25,
    )
)
def test_no_overlapping_reservations_ever_share_a_label(
    steps: list[tuple[list[list[str]], tuple[int, int], int, str]],
) -> None:
    calendar = LabelCalendar(vlan_spans=SPANS, group_ids=range(100, 110))
    held: Held = {}
    for i, (paths, window, groups, then) in enumerate(steps):
        owner = f"r{i}"
        expected = lowest_free_vlans(held, window, paths)
        try:
            labels = calendar.assign(owner, window, paths, groups)
        except NoFreeLabelError as refused:
            assert expected is None or refused.field == "group_ids"
            continue
        assert labels.vlans == expected
        assert calendar.assign(owner, window, paths, groups) == labels  # deterministic
        assert calendar.clashes(owner, window, paths, labels) == []
        for links, vlan in zip(paths, labels.vlans, strict=True):
            assert all(vlan in RANGES[link] for link in links)
        assert len(set(labels.vlans)) == len(labels.vlans)
        calendar.record(owner, window, paths, labels)
        calendar.record(owner, window, paths, labels)  # learnt again once written: no change
        held[owner] = (paths, window, labels)
        first = sorted(held)[0]
        if then == "release":
            calendar.release(first)
            del held[first]
        elif then == "move":  # a modification keeping its labels where they stay free
            moved_paths, (start, end), moved_labels = held[first]
            later = (start + 7, end + 7)
            if not calendar.clashes(first, later, moved_paths, moved_labels):
                calendar.record(first, later, moved_paths, moved_labels)
                held[first] = (moved_paths, later, moved_labels)
    for (_, (p1, w1, l1)), (_, (p2, w2, l2)) in itertools.combinations(held.items(), 2):
        if w1[0] < w2[1] and w2[0] < w1[1]:
            used1 = {(link, v) for links, v in zip(p1, l1.vlans, strict=True) for link in links}
            used2 = {(link, v) for links, v in zip(p2, l2.vlans, strict=True) for link in links}
            assert not used1 & used2
            assert not set(l1.group_ids) & set(l2.group_ids)
