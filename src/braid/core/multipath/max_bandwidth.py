"""Highest bandwidth over at most k paths throughout a window."""

from __future__ import annotations

from braid.core.errors import InputError
from braid.core.model.network import Network
from braid.core.multipath.maxflow import max_flow
from braid.core.multipath.mdi import DEFAULT_POLICY, MdiPolicy
from braid.core.multipath.plan import Gate, SplitPlan, build_plan
from braid.core.multipath.select import most_bandwidth, total
from braid.core.multipath.split import check_request, verified


def split_max_bandwidth(
    network: Network,
    src: str,
    dst: str,
    start: int,
    end: int,
    *,
    max_paths: int,
    mode: str = "flow",
    symmetric: bool = True,
    policy: MdiPolicy = DEFAULT_POLICY,
) -> SplitPlan | None:
    """The most found over at most `max_paths` paths, or None when nothing is free.

    Never less than the single widest path, never more than the max flow
    (reported in `max_flow`); each path gets all it carries in the chosen
    jointly feasible set, so the shares are those amounts.
    """
    check_request(network, src, dst, max_paths, mode)
    if start >= end:
        raise InputError("end", f"must be after start ({start}), got {end}")
    view = network.window(start, end, symmetric=symmetric)
    gate = Gate(network.topology, mode, policy)
    flow = max_flow(network.topology, src, dst, view.usable, symmetric=symmetric)
    chosen = most_bandwidth(view, src, dst, max_paths, flow, gate)
    if not chosen:
        return None
    return verified(view, build_plan(gate, chosen, total(chosen), flow.value))
