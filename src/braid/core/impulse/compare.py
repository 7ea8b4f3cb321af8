"""Two configurations side by side: how much later the second one recovers, event by event."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

from braid.core.errors import InputError
from braid.core.impulse.response import ImpulseAnalysis

__all__ = ["Comparison", "compare"]


@dataclass(frozen=True, slots=True)
class Comparison:
    """`delays[k]`: second's recovery minus first's, for the k-th event both recovered from."""

    delays: tuple[float, ...]
    unpaired: int  # events without a recovery in either, or beyond the shorter train
    median: float | None
    edges: tuple[float, ...]  # histogram bin edges (seconds), len(counts) + 1
    counts: tuple[int, ...]


def compare(first: ImpulseAnalysis, second: ImpulseAnalysis, bin_width: float) -> Comparison:
    """Pair events by their order in each train, as the seed does for dpctl against ODL."""
    if not math.isfinite(bin_width) or bin_width <= 0:
        raise InputError("bin_width", f"{bin_width} must be a positive number of seconds")
    delays = tuple(
        b.recovery - a.recovery
        for a, b in zip(first.events, second.events, strict=False)
        if a.recovery is not None and b.recovery is not None
    )
    unpaired = max(len(first.events), len(second.events)) - len(delays)
    if not delays:
        return Comparison((), unpaired, None, (), ())
    low = math.floor(min(delays) / bin_width) * bin_width
    high = (
        math.floor(max(delays) / bin_width) + 1
    ) * bin_width  # max in the last bin, not on its edge
    bins = max(1, round((high - low) / bin_width))
    counts, edges = np.histogram(delays, bins=bins, range=(low, high))
    return Comparison(
        delays=delays,
        unpaired=unpaired,
        median=statistics.median(delays),
        edges=tuple(float(e) for e in edges),
        counts=tuple(int(c) for c in counts),
    )
