"""split_all_slots: single-path all-slots at k = 1, a brute-force sweep of split_fixed beyond."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.model.booking import Allocation, Booking
from braid.core.model.intervals import IntervalSet
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.multipath import SplitPlan, split_fixed
from braid.core.multipath.all_slots import span_starts, split_all_slots
from braid.core.schedule import all_slots
from tests.unit.core.multipath.nets import M, network
from tests.unit.core.netgen import HORIZON, loaded_networks


def busy_pair() -> Network:
    net = network([("a", "A", "B", 100, 1), ("b", "A", "B", 100, 1)])
    net.commit(Booking("x", 0, 20, (Allocation(Path(("A", "B"), ("a",)), 60 * M),)))
    net.commit(Booking("y", 10, 30, (Allocation(Path(("A", "B"), ("b",)), 60 * M),)))
    return net


def test_two_paths_open_starts_no_single_path_has() -> None:
    net = busy_pair()
    # 80 Mbit/s for 5 s: one path once a link is free throughout the window,
    # two paths (40 + 40) wherever both have 40 left, which is always.
    assert all_slots(net, "A", "B", 80 * M, 5, 0, 40).spans == ((0, 6), (20, 40))
    assert split_all_slots(net, "A", "B", 80 * M, 5, 0, 40, max_paths=2).spans == ((0, 40),)


def test_more_than_both_links_fit_only_while_one_is_free() -> None:
    net = busy_pair()
    # 150 Mbit/s needs both links with at most 50 booked on them: after 30 only.
    got = split_all_slots(net, "A", "B", 150 * M, 5, 0, 40, max_paths=2)
    assert got.spans == ((30, 40),)
    assert split_all_slots(net, "A", "B", 250 * M, 5, 0, 40, max_paths=2) == IntervalSet()


def test_span_starts_are_where_a_piece_enters_or_leaves_the_window() -> None:
    net = busy_pair()  # breakpoints 0, 10, 20, 30
    assert span_starts(net, 5, 0, 40) == [0, 6, 10, 16, 20, 26, 30]


def test_bad_input_names_the_field() -> None:
    net = busy_pair()
    with pytest.raises(InputError) as bad:
        split_all_slots(net, "A", "B", 0, 5, 0, 40, max_paths=2)
    assert bad.value.field == "need"
    with pytest.raises(InputError) as bad:
        split_all_slots(net, "A", "B", M, 5, 0, 40, max_paths=0)
    assert bad.value.field == "max_paths"


def _draw(net: Network, data: st.DataObject) -> tuple[str, str, int, int, int, int, bool]:
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    need = data.draw(st.integers(1, 20))
    duration = data.draw(st.integers(1, 12))
    first = data.draw(st.integers(0, HORIZON))
    stop = data.draw(st.integers(first, HORIZON + 15))
    return src, dst, need, duration, first, stop, data.draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_one_path_is_the_single_path_all_slots(net: Network, data: st.DataObject) -> None:
    src, dst, need, duration, first, stop, symmetric = _draw(net, data)
    want = all_slots(net, src, dst, need, duration, first, stop, symmetric=symmetric)
    got = split_all_slots(
        net, src, dst, need, duration, first, stop, max_paths=1, symmetric=symmetric
    )
    assert got == want


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_several_paths_match_split_fixed_at_every_start(net: Network, data: st.DataObject) -> None:
    src, dst, need, duration, first, stop, symmetric = _draw(net, data)
    k = data.draw(st.integers(2, 4))
    mode = data.draw(st.sampled_from(["flow", "packet"]))
    options: dict[str, Any] = {"max_paths": k, "mode": mode, "symmetric": symmetric}
    got = split_all_slots(net, src, dst, need, duration, first, stop, **options)
    fits = [
        s
        for s in range(first, stop)
        if isinstance(split_fixed(net, src, dst, need, s, s + duration, **options), SplitPlan)
    ]
    assert got == IntervalSet.of((s, s + 1) for s in fits)
    single = all_slots(net, src, dst, need, duration, first, stop, symmetric=symmetric)
    assert single.difference(got) == IntervalSet()  # never fewer starts than one path
