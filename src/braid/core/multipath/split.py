"""Fixed slot over several paths: carry `need` throughout [start, end) on at most k paths."""

from __future__ import annotations

from braid.core.errors import InputError
from braid.core.graph.search import shortest_feasible_path
from braid.core.model.booking import Booking
from braid.core.model.network import Network, WindowView
from braid.core.multipath.decompose import FlowPath
from braid.core.multipath.maxflow import MaxFlow, max_flow
from braid.core.multipath.mdi import DEFAULT_POLICY, MdiPolicy
from braid.core.multipath.plan import (
    Gate,
    SplitPlan,
    SplitRefusal,
    build_plan,
    capacity_reason,
    check_mode,
    mdi_reason,
    where,
)
from braid.core.multipath.select import (
    decomposition_prefix,
    fewest_paths,
    most_bandwidth_total,
    paths_of,
)


def split_fixed(
    network: Network,
    src: str,
    dst: str,
    need: int,
    start: int,
    end: int,
    *,
    max_paths: int,
    mode: str = "flow",
    symmetric: bool = True,
    policy: MdiPolicy = DEFAULT_POLICY,
) -> SplitPlan | SplitRefusal:
    """`need` bit/s throughout [start, end) over at most `max_paths` paths, or why not.

    One path when one suffices (the lowest-latency one, as `fixed_path`);
    otherwise the fewest paths found, with shares proportional to what each
    can carry, so the request is never spread thinner than it must be.
    """
    check_request(network, src, dst, max_paths, mode)
    check_positive(need, "need")
    if start >= end:
        raise InputError("end", f"must be after start ({start}), got {end}")
    view = network.window(start, end, symmetric=symmetric)
    return split_in_view(view, src, dst, need, max_paths, Gate(network.topology, mode, policy))


def split_in_view(
    view: WindowView, src: str, dst: str, need: int, max_paths: int, gate: Gate
) -> SplitPlan | SplitRefusal:
    """`split_fixed` once the arguments are checked and the window is set."""
    flow = max_flow(view.topology, src, dst, view.usable, symmetric=view.symmetric)
    plan, blocked_mdi = _plan(view, src, dst, need, max_paths, gate, flow)
    if plan is not None:
        return plan
    best = most_bandwidth_total(view, src, dst, max_paths, flow, gate)
    place = where(src, dst, view.start, view.end)
    if blocked_mdi is not None:
        reason = mdi_reason(place, need, max_paths, gate.policy.refuse_above, blocked_mdi)
    else:
        reason = capacity_reason(place, need, best, flow.value, max_paths)
    return SplitRefusal(reason, flow.value, best, blocked_mdi)


def plan_in_view(
    view: WindowView, src: str, dst: str, need: int, max_paths: int, gate: Gate
) -> SplitPlan | None:
    """The plan `split_in_view` gives, or None where it refuses, without saying why.

    A search over many windows only wants the plan: the most the paths could
    carry, which a refusal reports, is a search of its own.
    """
    flow = max_flow(view.topology, src, dst, view.usable, symmetric=view.symmetric)
    return _plan(view, src, dst, need, max_paths, gate, flow)[0]


def has_plan(view: WindowView, src: str, dst: str, need: int, max_paths: int, gate: Gate) -> bool:
    """Whether `plan_in_view` finds a plan, mostly without building it.

    When the first of the max flow's widest decomposed paths carry `need`
    and the gate allows them, `fewest_paths` has a set to fall back on, so
    `_plan` ends with a plan whatever its searches then find.
    """
    flow = max_flow(view.topology, src, dst, view.usable, symmetric=view.symmetric)
    if flow.value < need:
        return False
    prefix = decomposition_prefix(flow, need, max_paths)
    if max_paths > 1 and prefix is not None and gate.allows(paths_of(prefix)):
        return True
    return _plan(view, src, dst, need, max_paths, gate, flow)[0] is not None


def _plan(
    view: WindowView, src: str, dst: str, need: int, max_paths: int, gate: Gate, flow: MaxFlow
) -> tuple[SplitPlan | None, float | None]:
    """The plan, or None with the MDI that turned the fitting paths away if that was why."""
    if flow.value < need:
        return None, None  # no path, nor any set of them, carries more than the max flow
    topology = view.topology
    single = shortest_feasible_path(topology, src, dst, view.usable, need)
    if single is not None:
        return verified(view, build_plan(gate, [FlowPath(single, need)], need, flow.value)), None
    chosen, blocked_mdi = None, None
    if max_paths > 1:
        chosen, blocked_mdi = fewest_paths(view, src, dst, need, max_paths, flow, gate)
    if chosen is not None:
        return verified(view, build_plan(gate, chosen, need, flow.value)), None
    return None, blocked_mdi


def verified(view: WindowView, plan: SplitPlan) -> SplitPlan:
    """Refuse to hand out a plan the network would not commit (a bug if it happens)."""
    probe = Booking("split-check", view.start, view.end, plan.allocations, view.symmetric)
    short = view.network.shortfall(probe)
    if short:
        (link, _), missing = short[0]
        raise RuntimeError(f"split plan overbooks link {link} by {missing} bit/s")
    return plan


def check_request(network: Network, src: str, dst: str, max_paths: int, mode: str) -> None:
    network.topology.require_node(src, "src")
    network.topology.require_node(dst, "dst")
    if src == dst:
        raise InputError("dst", f"must differ from the source {src!r}")
    check_positive(max_paths, "max_paths")
    check_mode(mode)


def check_positive(value: int, field: str) -> None:
    """Bit/s, seconds and path counts are positive integers (bool is no integer here)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(field, f"must be a positive integer, got {value!r}")
