"""A congested path of a packet-split reservation, told from its edges' counters (seed 002).

MPSDN (§IV-A4) polls port statistics, estimates each path's available
capacity and recomputes the round-robin weights w_j = c_j / sum(c_i); a
completely congested path drops to weight 0 and the flow carries on over
the others. braid's edges count what they put on each path (the sending
edge's `sent` per VLAN) and what came off it (the receiving edge's
`arrived` per VLAN), so a path's loss over a window is measured directly,
whatever else shares its links: a path that loses more than the policy
allows has no capacity left for the reservation (c_j = 0), the others keep
their booked share. A path must lose that much over `windows` windows in a
row: frames queued at a window's end count as lost, so the window in which a
flow's slow start fills the paths' queues looks lossy once, congestion does
so window after window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.errors import InputError

__all__ = ["CongestionPolicy", "PathCounts", "confirmed", "reweighed", "window_verdicts"]


@dataclass(frozen=True, slots=True)
class PathCounts:
    """Frames put on a path by the sending edge, and taken off it by the receiving one,
    since the edges started (cumulative)."""

    sent: int
    arrived: int


@dataclass(frozen=True, slots=True)
class CongestionPolicy:
    """`loss_above`: the share of a window's frames a path may lose before it counts as
    congested (frames still in flight at the window's end count as lost, so keep it well
    above the paths' delay over the window); `min_frames`: fewer frames sent on a path and
    the window goes on (no verdict on a handful of packets); `windows`: how many windows
    in a row a path must lose that much in before it counts as congested."""

    loss_above: float = 0.25
    min_frames: int = 8
    windows: int = 2

    def __post_init__(self) -> None:
        if not 0.0 < self.loss_above < 1.0:
            raise InputError("loss_above", f"{self.loss_above} is not between 0 and 1")
        if self.min_frames < 1:
            raise InputError("min_frames", f"{self.min_frames} is below 1")
        if self.windows < 1:
            raise InputError("windows", f"{self.windows} is below 1")


def window_verdicts(
    base: Sequence[PathCounts], now: Sequence[PathCounts], policy: CongestionPolicy
) -> tuple[bool | None, ...]:
    """Per path, from the counts at the window's start (`base`) to `now`: True congested,
    False not, None too few frames sent yet to tell (keep that path's base)."""
    if len(base) != len(now):
        raise InputError("now", "give one count per path, as in base")
    verdicts: list[bool | None] = []
    for start, end in zip(base, now, strict=True):
        sent, arrived = end.sent - start.sent, end.arrived - start.arrived
        if sent < policy.min_frames:
            verdicts.append(None)
            continue
        verdicts.append(1.0 - min(arrived, sent) / sent > policy.loss_above)
    return tuple(verdicts)


def confirmed(
    streaks: Sequence[int], verdicts: Sequence[bool | None], policy: CongestionPolicy
) -> tuple[tuple[int, ...], tuple[bool | None, ...]]:
    """Per path, the lossy windows in a row after this window's `verdicts` (`streaks`:
    before it), and the verdicts `reweighed` acts on: congested only after
    `policy.windows` lossy windows in a row; a window without a verdict changes nothing."""
    if len(streaks) != len(verdicts):
        raise InputError("verdicts", "give one verdict per path, as in streaks")
    after = tuple(
        streak if verdict is None else (streak + 1 if verdict else 0)
        for streak, verdict in zip(streaks, verdicts, strict=True)
    )
    judged = tuple(
        None if verdict is None else streak >= policy.windows
        for streak, verdict in zip(after, verdicts, strict=True)
    )
    return after, judged


def reweighed(
    shares: Sequence[float], current: Sequence[float], verdicts: Sequence[bool | None]
) -> tuple[float, ...]:
    """The weights after a window: a congested path 0, a path that had weight its booked
    share (MPSDN's c_j / sum(c_i), normalised), a path already at 0 stays there. If every
    path would be at 0 the current weights stay (the traffic has nowhere better to go)."""
    if not len(shares) == len(current) == len(verdicts):
        raise InputError("verdicts", "give one share, weight and verdict per path")
    if any(s < 0 for s in shares) or not any(s > 0 for s in shares):
        raise InputError("shares", "must be non-negative with one above 0")
    capacity = [
        0.0 if verdict or weight <= 0 else share
        for share, weight, verdict in zip(shares, current, verdicts, strict=True)
    ]
    total = sum(capacity)
    if total <= 0:
        return tuple(current)
    return tuple(round(c / total, 6) for c in capacity)
