"""split_fixed: properties on random loaded networks, and hand-made cases."""

from __future__ import annotations

import gc
import weakref
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.model.units import format_bandwidth
from braid.core.multipath import SplitPlan, SplitRefusal, max_flow, split_fixed
from braid.core.multipath.residual import path_hops
from braid.core.schedule import widest
from tests.unit.core.multipath.checks import check_plan
from tests.unit.core.multipath.nets import M, network
from tests.unit.core.netgen import HORIZON, loaded_networks, simple_paths


@settings(max_examples=200, deadline=None)
@given(loaded_networks(), st.data())
def test_every_plan_commits_and_every_refusal_is_justified(
    net: Network, data: st.DataObject
) -> None:
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    start = data.draw(st.integers(0, HORIZON - 1))
    end = data.draw(st.integers(start + 1, HORIZON))
    need = data.draw(st.integers(1, 25))
    k = data.draw(st.integers(1, 4))
    mode = data.draw(st.sampled_from(["flow", "packet"]))
    symmetric = data.draw(st.booleans())
    result = split_fixed(
        net, src, dst, need, start, end, max_paths=k, mode=mode, symmetric=symmetric
    )
    view = net.window(start, end, symmetric=symmetric)
    flow = max_flow(net.topology, src, dst, view.usable, symmetric=symmetric)
    one = widest(net, src, dst, start, end, symmetric=symmetric)
    one_width = one[1] if one else 0
    assert result.max_flow == flow.value
    if isinstance(result, SplitPlan):
        check_plan(net, result, src, dst, need, (start, end), k, symmetric)
        if one_width >= need:
            assert len(result.allocations) == 1
        return
    assert one_width < need, "one path suffices, yet refused"
    assert one_width <= result.best_total < need
    assert result.best_total <= flow.value
    top_k = sum(p.amount for p in flow.paths[:k])
    if mode == "flow":
        assert top_k < need, "the decomposition's k widest paths carry it, yet refused"


def two_paths_suffice(
    net: Network, src: str, dst: str, need: int, window: tuple[int, int], symmetric: bool
) -> bool:
    """Exactly: do at most two simple paths carry `need` together?

    Two paths with room a and b alone carry min(a + b, room of the resource
    they share), where a resource is a link (symmetric) or a link direction.
    """
    view = net.window(*window, symmetric=symmetric)
    rooms = []
    for path in simple_paths(net.topology, src, dst):
        keys: dict[object, int] = {}
        for hop in path_hops(net.topology, path):
            keys[hop.link if symmetric else (hop.link, hop.forward)] = view.usable(hop)
        rooms.append((min(keys.values()), keys))
    if any(alone >= need for alone, _ in rooms):
        return True
    for (a, first), (b, second) in combinations(rooms, 2):
        shared = [first[key] for key in first.keys() & second.keys()]
        if min([a + b, *shared]) >= need:
            return True
    return False


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_two_paths_found_whenever_two_exist(net: Network, data: st.DataObject) -> None:
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    start = data.draw(st.integers(0, HORIZON - 1))
    end = data.draw(st.integers(start + 1, HORIZON))
    need = data.draw(st.integers(1, 20))
    symmetric = data.draw(st.booleans())
    result = split_fixed(net, src, dst, need, start, end, max_paths=2, symmetric=symmetric)
    exists = two_paths_suffice(net, src, dst, need, (start, end), symmetric)
    assert isinstance(result, SplitPlan) == exists


def test_one_path_when_one_suffices() -> None:
    net = network([("a", "A", "B", 100, 5), ("b", "A", "B", 100, 1)])
    result = split_fixed(net, "A", "B", 80 * M, 0, 10, max_paths=4)
    assert isinstance(result, SplitPlan)
    assert [a.path.links for a in result.allocations] == [("b",)]  # the faster one
    assert result.weights == (1.0,)
    assert result.recommended_streams == 2
    assert result.max_flow == 200 * M


def test_two_tunnels_of_500_for_one_gigabit() -> None:
    # Seed 000 §6.5: 1 Gbit/s over two 500 Mbit/s L2 tunnels, two TCP streams each.
    net = network([("t1", "A", "B", 500, 10), ("t2", "A", "B", 500, 12)])
    result = split_fixed(net, "A", "B", 1000 * M, 0, 60, max_paths=2)
    assert isinstance(result, SplitPlan)
    assert sorted(a.bandwidth for a in result.allocations) == [500 * M, 500 * M]
    assert result.weights == (0.5, 0.5)
    assert result.recommended_streams == 4
    assert result.mode == "flow"


def test_shares_follow_capacity() -> None:
    net = network([("big", "A", "B", 900, 1), ("small", "A", "B", 300, 1)])
    result = split_fixed(net, "A", "B", 1000 * M, 0, 10, max_paths=2)
    assert isinstance(result, SplitPlan)
    assert [a.bandwidth for a in result.allocations] == [750 * M, 250 * M]
    assert result.weights == (0.75, 0.25)


def test_shared_link_is_never_overbooked() -> None:
    # Both paths cross S-X; the decomposition's amounts already account for it.
    net = network([("sx", "S", "X", 150, 1), ("x1", "X", "T", 100, 1), ("x2", "X", "T", 100, 1)])
    result = split_fixed(net, "S", "T", 150 * M, 0, 10, max_paths=2)
    assert isinstance(result, SplitPlan)
    check_plan(net, result, "S", "T", 150 * M, (0, 10), 2, True)
    assert sorted(a.bandwidth for a in result.allocations) == [50 * M, 100 * M]


def test_max_flow_finds_what_greedy_misses() -> None:
    net = network(
        [
            ("sa", "S", "A", 1, 1),
            ("ab", "A", "B", 1, 1),
            ("bt", "B", "T", 1, 1),
            ("sb", "S", "B", 1, 10),
            ("at", "A", "T", 1, 10),
        ]
    )
    result = split_fixed(net, "S", "T", 2 * M, 0, 10, max_paths=2)
    assert isinstance(result, SplitPlan)
    assert {a.path.links for a in result.allocations} == {("sa", "at"), ("sb", "bt")}


def test_bookings_in_the_window_count() -> None:
    net = network([("a", "A", "B", 100, 1), ("b", "A", "B", 100, 1)])
    path = split_fixed(net, "A", "B", 1 * M, 0, 1, max_paths=1)
    assert isinstance(path, SplitPlan)
    first = path.allocations[0].path
    net.commit(Booking("old", 5, 15, (Allocation(first, 70 * M),)))
    result = split_fixed(net, "A", "B", 120 * M, 0, 10, max_paths=2)
    assert isinstance(result, SplitPlan)
    # 120 in proportion to 100 and 30; the rounding remainder goes to the larger fraction.
    assert sorted(a.bandwidth for a in result.allocations) == [27_692_308, 92_307_692]
    assert split_fixed(net, "A", "B", 120 * M, 15, 20, max_paths=2) is not None


def test_refusal_beyond_the_max_flow_bound() -> None:
    net = network([("a", "A", "B", 1000, 1), ("b", "A", "B", 500, 1)])
    result = split_fixed(net, "A", "B", 2000 * M, 100, 200, max_paths=2)
    assert isinstance(result, SplitRefusal)
    assert result.max_flow == 1500 * M
    assert result.best_total == 1500 * M
    assert format_bandwidth(1500 * M) in result.reason
    assert "between A and B in [100, 200)" in result.reason
    assert "another window" in result.reason


def test_what_a_split_keeps_per_pair_lets_the_topology_go() -> None:
    """Max flow and greedy paths keep structures per topology and pair, never the topology."""
    net = network([("a", "A", "B", 600, 1), ("b", "A", "B", 600, 1), ("c", "A", "B", 300, 1)])
    # A refusal runs the max flow, the greedy paths and the earliest start's cuts.
    assert isinstance(split_fixed(net, "A", "B", 1500 * M, 0, 10, max_paths=2), SplitRefusal)
    kept = weakref.ref(net.topology)
    del net
    gc.collect()
    assert kept() is None


def test_refusal_for_too_few_paths() -> None:
    net = network([("a", "A", "B", 600, 1), ("b", "A", "B", 600, 1), ("c", "A", "B", 300, 1)])
    result = split_fixed(net, "A", "B", 1500 * M, 0, 10, max_paths=2)
    assert isinstance(result, SplitRefusal)
    assert result.reason == (
        "only 1.2 Gbit/s of the 1.5 Gbit/s asked can be carried over at most 2 paths between "
        "A and B in [0, 10) (max-flow bound 1.5 Gbit/s); ask for less or allow more paths"
    )
    assert (result.max_flow, result.best_total) == (1500 * M, 1200 * M)
    assert isinstance(split_fixed(net, "A", "B", 1500 * M, 0, 10, max_paths=3), SplitPlan)


def test_nothing_free() -> None:
    net = network([("a", "A", "B", 10, 1), ("c", "C", "D", 10, 1)])
    result = split_fixed(net, "A", "C", 1 * M, 0, 10, max_paths=3)
    assert isinstance(result, SplitRefusal)
    assert result.reason.startswith("no bandwidth is free between A and C")
    assert (result.max_flow, result.best_total) == (0, 0)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"src": "Z"}, "src"),
        ({"dst": "A"}, "dst"),
        ({"need": 0}, "need"),
        ({"need": True}, "need"),
        ({"max_paths": 0}, "max_paths"),
        ({"mode": "spray"}, "mode"),
        ({"end": 0}, "end"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    net = network([("a", "A", "B", 10, 1)])
    args: dict[str, Any] = {"src": "A", "dst": "B", "need": 1, "start": 0, "end": 10}
    args.update(kwargs)
    options = {"max_paths": args.pop("max_paths", 2), "mode": args.pop("mode", "flow")}
    with pytest.raises(InputError) as info:
        split_fixed(net, **args, **options)
    assert info.value.field == field


def test_single_path_plan_for_callers_that_chose_the_path() -> None:
    path = Path(("A", "B"), ("a",))
    plan = SplitPlan.single(Allocation(path, 40 * M), mode="packet")
    assert plan.allocations == (Allocation(path, 40 * M),)
    assert (plan.max_flow, plan.mdi, plan.resequence, plan.weights) == (40 * M, 0.0, False, (1.0,))
    assert (plan.recommended_streams, plan.mode) == (2, "packet")
    assert SplitPlan.single(Allocation(path, 40 * M), max_flow=90 * M).max_flow == 90 * M
    with pytest.raises(InputError):
        SplitPlan.single(Allocation(path, 1), mode="spray")
