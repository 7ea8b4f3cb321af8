"""Multi-path splitting: max-flow path selection, MDI gating, capacity-weighted shares.

Seeds 000 (flow-level split, a VLAN per path, two TCP streams per path) and
002 (max-flow path selection, maximum delay imbalance, weighted round-robin).
"""

from braid.core.multipath.congestion import (
    CongestionPolicy,
    PathCounts,
    confirmed,
    reweighed,
    window_verdicts,
)
from braid.core.multipath.decompose import FlowPath, decompose
from braid.core.multipath.earliest import split_earliest
from braid.core.multipath.fairness import jain_index
from braid.core.multipath.max_bandwidth import split_max_bandwidth
from braid.core.multipath.maxflow import (
    MaxFlow,
    max_flow,
    max_flow_value,
    min_cut,
)
from braid.core.multipath.mdi import MdiPolicy, mdi, paths_mdi
from braid.core.multipath.plan import MODES, SplitPlan, SplitRefusal
from braid.core.multipath.shares import proportional_shares, weights
from braid.core.multipath.split import split_fixed

__all__ = [
    "MODES",
    "CongestionPolicy",
    "FlowPath",
    "MaxFlow",
    "MdiPolicy",
    "PathCounts",
    "SplitPlan",
    "SplitRefusal",
    "confirmed",
    "decompose",
    "jain_index",
    "max_flow",
    "max_flow_value",
    "mdi",
    "min_cut",
    "paths_mdi",
    "proportional_shares",
    "reweighed",
    "split_earliest",
    "split_fixed",
    "split_max_bandwidth",
    "weights",
    "window_verdicts",
]
