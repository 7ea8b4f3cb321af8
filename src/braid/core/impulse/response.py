"""Seed 003's impulse-response method: the response to each degradation, and their mean.

For the i-th degradation at time eᵢ, the response is what the connection
fails to carry, Rᵢ(jδ) = B − T(eᵢ − lead + jδ) for j = 0 … T/δ − 1, with B the
peak rate and T(t) the throughput trace. The response mean
R̂(jδ) = (1/n) Σᵢ Rᵢ(jδ) is the estimate of the response regression that the
seed compares configurations by; a bootstrap over events gives its band.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from braid.core.errors import InputError
from braid.core.impulse.trace import EventMarks, Trace

__all__ = ["EventResponse", "ImpulseAnalysis", "ImpulseSettings", "analyze"]


@dataclass(frozen=True, slots=True)
class ImpulseSettings:
    """How to cut the trace; None picks the default named beside each field."""

    period: float | None = None  # T: the shortest gap between events
    step: float | None = None  # δ: the trace's median sample spacing
    lead: float | None = None  # seconds of each window before its event: T/10
    pre: float | None = None  # seconds before an event whose mean is the "pre-event rate": T/5
    peak: float | None = None  # B: the trace's highest rate
    recovered: float = 0.9  # back to this fraction of the pre-event rate counts as recovered
    confidence: float = 0.9  # width of the bootstrap band
    resamples: int = 1000  # bootstrap resamples


@dataclass(frozen=True, slots=True)
class EventResponse:
    """One event's response and timings, in seconds after its degradation (None: not seen)."""

    degraded: float
    pre_rate: float
    detect: float | None
    switch: float | None
    dip: float | None  # first time the rate is below `recovered` × pre_rate
    recovery: float | None  # first time it is back at or above it after the dip
    response: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class ImpulseAnalysis:
    period: float
    step: float
    lead: float
    peak: float
    offsets: tuple[float, ...]  # jδ − lead: seconds from the event, per response point
    events: tuple[EventResponse, ...]
    mean: tuple[float, ...]  # R̂
    band_low: tuple[float, ...] | None  # bootstrap band of R̂ (None without a random source)
    band_high: tuple[float, ...] | None

    def median(self, field: str) -> float | None:
        """Median of an event timing (`detect`, `switch`, `dip`, `recovery`) where seen."""
        seen = [v for e in self.events if (v := getattr(e, field)) is not None]
        return statistics.median(seen) if seen else None


def analyze(
    trace: Trace,
    events: Sequence[EventMarks],
    settings: ImpulseSettings = ImpulseSettings(),
    rng: np.random.Generator | None = None,
) -> ImpulseAnalysis:
    """Responses, their mean and (given `rng`) a bootstrap band; errors name the field."""
    if not events:
        raise InputError("events", "no degradation events: give at least one event time")
    for i, marks in enumerate(events):
        marks.check(f"events[{i}]")
    for i in range(1, len(events)):
        if events[i].degraded <= events[i - 1].degraded:
            raise InputError(
                f"events[{i}].degraded",
                f"{events[i].degraded} is not after the event before it "
                f"({events[i - 1].degraded}): events must be in time order",
            )
    period, step, lead, pre, peak = _resolve(trace, events, settings)
    count = max(1, math.floor(period / step + 1e-9))
    offsets = tuple(-lead + j * step for j in range(count))
    responses = tuple(
        _event(trace, marks, i, offsets, pre, peak, period - lead, settings.recovered)
        for i, marks in enumerate(events)
    )
    matrix = np.array([e.response for e in responses], dtype=float)
    low, high = _band(matrix, rng, settings) if rng is not None else (None, None)
    return ImpulseAnalysis(
        period=period,
        step=step,
        lead=lead,
        peak=peak,
        offsets=offsets,
        events=responses,
        mean=tuple(float(v) for v in matrix.mean(axis=0)),
        band_low=low,
        band_high=high,
    )


def _positive(value: float | None, default: float, field: str) -> float:
    chosen = default if value is None else value
    if not math.isfinite(chosen) or chosen <= 0:
        raise InputError(field, f"{chosen} must be a positive number of seconds")
    return float(chosen)


def _resolve(
    trace: Trace, events: Sequence[EventMarks], s: ImpulseSettings
) -> tuple[float, float, float, float, float]:
    if not 0 < s.recovered <= 1:
        raise InputError("recovered", f"{s.recovered} must be in (0, 1]")
    if not 0 < s.confidence < 1:
        raise InputError("confidence", f"{s.confidence} must be in (0, 1)")
    if s.resamples < 1:
        raise InputError("resamples", f"{s.resamples} must be at least 1")
    gaps = [b.degraded - a.degraded for a, b in itertools.pairwise(events)]
    period = _positive(s.period, min(gaps) if gaps else trace.end - events[0].degraded, "period")
    spacing = statistics.median(b - a for a, b in itertools.pairwise(trace.times))
    step = _positive(s.step, spacing, "step")
    if step > period:
        raise InputError("step", f"{step} s is longer than the period ({period} s)")
    lead = period / 10 if s.lead is None else s.lead
    if not 0 <= lead < period:
        raise InputError("lead", f"{lead} must be at least 0 and less than the period ({period} s)")
    pre = _positive(s.pre, period / 5, "pre")
    peak = max(trace.rates) if s.peak is None else s.peak
    if not math.isfinite(peak) or peak <= 0:
        raise InputError("peak", f"{peak} must be a positive rate (bit/s)")
    return period, step, lead, pre, peak


def _event(
    trace: Trace,
    marks: EventMarks,
    i: int,
    offsets: tuple[float, ...],
    pre: float,
    peak: float,
    after: float,
    recovered: float,
) -> EventResponse:
    e = marks.degraded
    first, last = e + offsets[0], e + offsets[-1]
    if first < trace.start or e - pre < trace.start:
        raise InputError(
            f"events[{i}]",
            f"the window before the event at {e} starts at {min(first, e - pre)}, "
            f"before the trace ({trace.start})",
        )
    if last > trace.end:
        raise InputError(
            f"events[{i}]",
            f"the window after the event at {e} ends at {last}, after the trace ({trace.end})",
        )
    pre_rate = trace.mean(e - pre, e)
    assert pre_rate is not None  # pre > 0
    level = recovered * pre_rate
    dip = trace.first(e, e + after, below=True, level=level)
    back = trace.first(dip, e + after, below=False, level=level) if dip is not None else None
    return EventResponse(
        degraded=e,
        pre_rate=pre_rate,
        detect=None if marks.detected is None else marks.detected - e,
        switch=None if marks.switched is None else marks.switched - e,
        dip=None if dip is None else dip - e,
        recovery=None if back is None else back - e,
        response=tuple(peak - trace.at(e + o) for o in offsets),
    )


def _band(
    matrix: np.ndarray, rng: np.random.Generator, s: ImpulseSettings
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    # Resample whole events, not points: an event's response is one draw.
    n = matrix.shape[0]
    picks = rng.integers(0, n, size=(s.resamples, n))
    means = matrix[picks].mean(axis=1)
    tail = (1 - s.confidence) / 2
    low = np.quantile(means, tail, axis=0)
    high = np.quantile(means, 1 - tail, axis=0)
    return tuple(float(v) for v in low), tuple(float(v) for v in high)
