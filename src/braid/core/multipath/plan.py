"""The answer of a split: a plan of paths and shares, or a refusal a user can read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.model.booking import Allocation, Booking
from braid.core.model.paths import Path
from braid.core.model.topology import Topology
from braid.core.model.units import format_bandwidth
from braid.core.multipath.decompose import FlowPath
from braid.core.multipath.mdi import MdiPolicy, paths_mdi
from braid.core.multipath.shares import proportional_shares, weights

MODES = ("flow", "packet")

# Seed 000 §6.5: two TCP streams per L2 tunnel gave the best GridFTP
# throughput, so flow-level splitting wants two flows for each path's VLAN.
STREAMS_PER_PATH = 2


@dataclass(frozen=True, slots=True)
class SplitPlan:
    """Paths with their shares (bit/s), and how the edge should spread traffic.

    `weights` are share / total, for the ingress select group (weighted hash
    of flows in `flow` mode, weighted round-robin of packets in `packet`
    mode); `resequence` asks for a reordering buffer at the receiving edge.
    """

    allocations: tuple[Allocation, ...]
    max_flow: int
    mdi: float
    resequence: bool
    weights: tuple[float, ...]
    recommended_streams: int
    mode: str

    @staticmethod
    def single(
        allocation: Allocation, *, mode: str = "flow", max_flow: int | None = None
    ) -> SplitPlan:
        """A one-path plan for callers that chose the path themselves.

        `max_flow` defaults to the path's own bandwidth, a lower bound of the
        true one, for callers that did not compute the max flow.
        """
        check_mode(mode)
        bound = allocation.bandwidth if max_flow is None else max_flow
        return SplitPlan((allocation,), bound, 0.0, False, (1.0,), STREAMS_PER_PATH, mode)

    @property
    def total(self) -> int:
        return sum(a.bandwidth for a in self.allocations)

    @property
    def paths(self) -> tuple[Path, ...]:
        return tuple(a.path for a in self.allocations)

    def booking(self, booking_id: str, start: int, end: int, *, symmetric: bool = True) -> Booking:
        return Booking(booking_id, start, end, self.allocations, symmetric)


@dataclass(frozen=True, slots=True)
class SplitRefusal:
    """Why no plan fits, the max-flow bound, and the most found over the allowed paths.

    `blocked_mdi` is set when paths could carry the request but their delay
    imbalance is above what the policy allows: the MDI of those paths.
    """

    reason: str
    max_flow: int
    best_total: int
    blocked_mdi: float | None = None


@dataclass(frozen=True, slots=True)
class Gate:
    """What the splitting mode demands of a set of paths (delay balance in packet mode)."""

    topology: Topology
    mode: str
    policy: MdiPolicy

    def mdi(self, paths: Sequence[Path]) -> float:
        return paths_mdi(self.topology, paths)

    def allows(self, paths: Sequence[Path]) -> bool:
        return self.allows_mdi(self.mdi(paths))

    def allows_mdi(self, value: float) -> bool:
        # Flow-level splitting keeps each TCP flow on one path, so packets are
        # never reordered and the delay imbalance does no harm.
        return self.mode == "flow" or value <= self.policy.refuse_above

    def resequence(self, paths: Sequence[Path]) -> bool:
        return self.resequence_mdi(self.mdi(paths))

    def resequence_mdi(self, value: float) -> bool:
        return self.mode == "packet" and value > self.policy.resequence_above


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InputError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")


def build_plan(gate: Gate, chosen: Sequence[FlowPath], need: int, max_flow: int) -> SplitPlan:
    """Share `need` over the chosen paths in proportion to what each can carry."""
    shares = proportional_shares(need, [c.amount for c in chosen])
    allocations = tuple(
        Allocation(c.path, share) for c, share in zip(chosen, shares, strict=True) if share > 0
    )
    paths = [a.path for a in allocations]
    streams = STREAMS_PER_PATH * len(paths) if gate.mode == "flow" else STREAMS_PER_PATH
    return SplitPlan(
        allocations=allocations,
        max_flow=max_flow,
        mdi=gate.mdi(paths),
        resequence=gate.resequence(paths),
        weights=weights([a.bandwidth for a in allocations]),
        recommended_streams=streams,
        mode=gate.mode,
    )


def where(src: str, dst: str, start: int, end: int, when: Callable[[int], str] = str) -> str:
    """The ends and the window, its instants written by `when` (epoch seconds by default)."""
    return f"between {src} and {dst} in [{when(start)}, {when(end)})"


def capacity_reason(place: str, need: int, best: int, bound: int, max_paths: int) -> str:
    """Say what fits and what the user can change; more paths help only below the bound."""
    if bound == 0:
        return f"no bandwidth is free {place}; choose another window"
    noun = "path" if max_paths == 1 else "paths"
    advice = "allow more paths" if bound >= need else "choose another window"
    return (
        f"only {format_bandwidth(best)} of the {format_bandwidth(need)} asked can be carried "
        f"over at most {max_paths} {noun} {place} (max-flow bound {format_bandwidth(bound)}); "
        f"ask for less or {advice}"
    )


def mdi_reason(place: str, need: int, max_paths: int, refuse_above: float, seen: float) -> str:
    return (
        f"no set of at most {max_paths} paths {place} carries {format_bandwidth(need)} with a "
        f"delay imbalance (MDI) of at most {refuse_above:g}; the paths that could carry "
        f"it have MDI {seen:.3f}; use flow mode, ask for less or choose another window"
    )
