"""split_earliest: never later than one path, exact against a brute-force sweep."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.multipath import SplitPlan, max_flow_value, split_earliest, split_fixed
from braid.core.schedule import earliest_start
from tests.unit.core.multipath.checks import check_plan
from tests.unit.core.multipath.nets import M, network
from tests.unit.core.netgen import HORIZON, loaded_networks


def busy_pair() -> Network:
    net = network([("a", "A", "B", 100, 1), ("b", "A", "B", 100, 1)])
    net.commit(Booking("x", 0, 20, (Allocation(Path(("A", "B"), ("a",)), 60 * M),)))
    net.commit(Booking("y", 0, 30, (Allocation(Path(("A", "B"), ("b",)), 60 * M),)))
    return net


def test_two_paths_start_before_one_could() -> None:
    net = busy_pair()
    assert earliest_start(net, "A", "B", 80 * M, 10, 0) == 20
    found = split_earliest(net, "A", "B", 80 * M, 10, 0, max_paths=2)
    assert found is not None
    start, plan = found
    assert start == 0
    assert sorted(a.bandwidth for a in plan.allocations) == [40 * M, 40 * M]


def test_falls_back_to_the_single_path_answer() -> None:
    net = busy_pair()
    found = split_earliest(net, "A", "B", 80 * M, 10, 0, max_paths=1)
    assert found is not None
    start, plan = found
    assert start == 20
    assert [a.path.links for a in plan.allocations] == [("a",)]


def test_more_than_any_single_path_waits_for_a_booking_to_end() -> None:
    net = network([("a", "A", "B", 100, 1), ("b", "A", "B", 100, 1)])
    net.commit(Booking("x", 0, 15, (Allocation(Path(("A", "B"), ("a",)), 80 * M),)))
    assert earliest_start(net, "A", "B", 150 * M, 5, 0) is None
    found = split_earliest(net, "A", "B", 150 * M, 5, 0, max_paths=2)
    assert found is not None and found[0] == 15
    assert found[1].total == 150 * M
    assert split_earliest(net, "A", "B", 150 * M, 5, 0, 18, max_paths=2) is None
    assert split_earliest(net, "A", "B", 150 * M, 5, 3, 20, max_paths=2) is not None
    assert split_earliest(net, "A", "B", 250 * M, 5, 0, max_paths=2) is None


@settings(max_examples=100, deadline=None)
@given(loaded_networks(), st.data())
def test_never_later_than_one_path_and_no_earlier_start_fits(
    net: Network, data: st.DataObject
) -> None:
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    need = data.draw(st.integers(1, 20))
    duration = data.draw(st.integers(1, 12))
    not_before = data.draw(st.integers(0, HORIZON))
    k = data.draw(st.integers(1, 3))
    mode = data.draw(st.sampled_from(["flow", "packet"]))
    symmetric = data.draw(st.booleans())
    options: dict[str, Any] = {"max_paths": k, "mode": mode, "symmetric": symmetric}
    single = earliest_start(net, src, dst, need, duration, not_before, symmetric=symmetric)
    found = split_earliest(net, src, dst, need, duration, not_before, **options)
    if single is not None:
        assert found is not None and found[0] <= single
    if found is not None:
        start, plan = found
        assert start >= not_before
        check_plan(net, plan, src, dst, need, (start, start + duration), k, symmetric)
    # Brute force: no earlier instant at all admits a plan (bookings end by HORIZON,
    # after which every start is alike).
    limit = found[0] if found is not None else max(not_before, HORIZON) + 1
    for s in range(not_before, limit):
        view = net.window(s, s + duration, symmetric=symmetric)
        if max_flow_value(net.topology, src, dst, view.usable, symmetric=symmetric) < need:
            continue
        earlier = split_fixed(net, src, dst, need, s, s + duration, **options)
        assert not isinstance(earlier, SplitPlan), f"start {s} fits before {limit}"
