"""Invariants every SplitPlan must meet, checked by committing it."""

from __future__ import annotations

from braid.core.model.network import Network
from braid.core.multipath import MdiPolicy, SplitPlan
from braid.core.planning.invariants import booking_problems, overbooking, split_problems


def check_plan(
    net: Network,
    plan: SplitPlan,
    src: str,
    dst: str,
    need: int,
    window: tuple[int, int],
    max_paths: int,
    symmetric: bool,
    policy: MdiPolicy = MdiPolicy(),  # noqa: B008
) -> None:
    """Shares sum to `need`, paths simple, at most k, bookable, weights and MDI sane."""
    start, end = window
    booking = plan.booking("plan", start, end, symmetric=symmetric)
    assert split_problems(plan.allocations, need) == []
    assert booking_problems(net.topology, booking, src, dst) == []
    assert 1 <= len(plan.allocations) <= max_paths
    assert len({a.path for a in plan.allocations}) == len(plan.allocations)
    assert plan.total == need <= plan.max_flow
    assert len(plan.weights) == len(plan.allocations)
    assert abs(sum(plan.weights) - 1.0) < 1e-9
    if plan.mode == "flow":
        assert not plan.resequence
        assert plan.recommended_streams == 2 * len(plan.allocations)
    else:
        assert plan.mdi <= policy.refuse_above
        assert plan.resequence == (plan.mdi > policy.resequence_above)
    net.commit(booking)
    assert overbooking(net) == []
    net.release("plan")
