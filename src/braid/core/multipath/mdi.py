"""Maximum delay imbalance (MDI) of a set of paths, and the policy that gates on it.

Seed 002 (§III-B, §IV-A2): MDI = d_max / (d_max + d_min) - 0.5, from 0 for
balanced paths to 0.5 at the limit. Packet-level splitting reorders packets
across paths, so above ~0.15 the receiver needs a resequencing buffer and
above ~0.4 the aggregate falls below a single path even with one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError
from braid.core.model.paths import Path
from braid.core.model.topology import Topology


@dataclass(frozen=True, slots=True)
class MdiPolicy:
    """Thresholds from seed 002's emulation (Fig. 3); operators may tune them."""

    resequence_above: float = 0.15
    refuse_above: float = 0.4

    def __post_init__(self) -> None:
        if not 0.0 <= self.resequence_above <= 0.5:
            raise InputError("resequence_above", "must be between 0 and 0.5")
        if not 0.0 <= self.refuse_above <= 0.5:
            raise InputError("refuse_above", "must be between 0 and 0.5")
        if self.resequence_above > self.refuse_above:
            raise InputError("resequence_above", "must not exceed refuse_above")


# Shared as a default argument; frozen, so no caller can change it for another.
DEFAULT_POLICY: Final = MdiPolicy()


def mdi(latencies_ms: Iterable[float]) -> float:
    """MDI of paths with these latencies; one path (or none, or all zero) gives 0."""
    values = list(latencies_ms)
    if len(values) < 2:
        return 0.0
    d_max, d_min = max(values), min(values)
    if d_max + d_min <= 0:
        return 0.0  # all paths instantaneous: perfectly balanced
    return d_max / (d_max + d_min) - 0.5


def paths_mdi(topology: Topology, paths: Sequence[Path]) -> float:
    """MDI over paths whose latency is the sum of their links' latency_ms."""
    return mdi(path.latency_ms(topology) for path in paths)
