"""split_max_bandwidth: between the single widest path and the max flow."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.multipath import (
    SplitRefusal,
    max_flow_value,
    split_fixed,
    split_max_bandwidth,
)
from braid.core.schedule import widest
from tests.unit.core.multipath.checks import check_plan
from tests.unit.core.multipath.nets import M, network
from tests.unit.core.netgen import HORIZON, loaded_networks


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_between_widest_path_and_max_flow(net: Network, data: st.DataObject) -> None:
    src, dst = data.draw(st.permutations(sorted(net.topology.nodes)))[:2]
    start = data.draw(st.integers(0, HORIZON - 1))
    end = data.draw(st.integers(start + 1, HORIZON))
    k = data.draw(st.integers(1, 4))
    mode = data.draw(st.sampled_from(["flow", "packet"]))
    symmetric = data.draw(st.booleans())
    options: dict[str, Any] = {"max_paths": k, "mode": mode, "symmetric": symmetric}
    plan = split_max_bandwidth(net, src, dst, start, end, **options)
    one = widest(net, src, dst, start, end, symmetric=symmetric)
    view = net.window(start, end, symmetric=symmetric)
    bound = max_flow_value(net.topology, src, dst, view.usable, symmetric=symmetric)
    if plan is None:
        assert one is None and bound == 0
        return
    assert one is not None and one[1] <= plan.total <= plan.max_flow == bound
    check_plan(net, plan, src, dst, plan.total, (start, end), k, symmetric)
    # A refusal reports the same best total the highest-bandwidth query finds.
    refusal = split_fixed(net, src, dst, plan.total + 1, start, end, **options)
    if isinstance(refusal, SplitRefusal):
        assert refusal.best_total == plan.total


def test_more_paths_more_bandwidth() -> None:
    net = network(
        [
            ("a", "A", "B", 100, 1),
            ("b", "A", "B", 80, 1),
            ("ac", "A", "C", 50, 1),
            ("cb", "C", "B", 70, 1),
        ]
    )
    totals = []
    for k in (1, 2, 3, 4):
        plan = split_max_bandwidth(net, "A", "B", 0, 10, max_paths=k)
        assert plan is not None
        totals.append(plan.total)
        assert plan.max_flow == 230 * M
    assert totals == [100 * M, 180 * M, 230 * M, 230 * M]


def test_allocations_are_what_each_path_carries() -> None:
    net = network([("sx", "S", "X", 150, 1), ("x1", "X", "T", 100, 1), ("x2", "X", "T", 100, 1)])
    plan = split_max_bandwidth(net, "S", "T", 0, 10, max_paths=3)
    assert plan is not None
    assert plan.total == 150 * M
    assert sorted(a.bandwidth for a in plan.allocations) == [50 * M, 100 * M]


def test_none_when_nothing_is_free() -> None:
    net = network([("a", "A", "B", 100, 1)])
    net.commit(Booking("full", 0, 10, (Allocation(Path(("A", "B"), ("a",)), 100 * M),)))
    assert split_max_bandwidth(net, "A", "B", 5, 15, max_paths=3) is None
    later = split_max_bandwidth(net, "A", "B", 10, 15, max_paths=3)
    assert later is not None and later.total == 100 * M
