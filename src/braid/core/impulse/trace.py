"""A throughput trace and the degradation events laid over it, checked on entry.

Times are seconds on any one clock (epoch or since the run began), the same
for the trace and its events; rates are bit/s. A trace is piecewise
constant: each sample holds from its own time until the next sample's, which
is what an interval counter (iperf3, an interface's bytes) reports.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.errors import InputError

__all__ = ["EventMarks", "Trace"]


def _finite(value: float, field: str) -> float:
    if not math.isfinite(value):
        raise InputError(field, f"{value!r} is not a finite number")
    return float(value)


@dataclass(frozen=True, slots=True)
class Trace:
    """Samples `(times[k], rates[k])`, times strictly increasing, rates ≥ 0."""

    times: tuple[float, ...]
    rates: tuple[float, ...]

    @classmethod
    def of(cls, times: Sequence[float], rates: Sequence[float], field: str = "trace") -> Trace:
        if len(times) != len(rates):
            raise InputError(
                field, f"{len(times)} times but {len(rates)} rates: give one rate per time"
            )
        if len(times) < 2:
            raise InputError(field, f"needs at least 2 samples, got {len(times)}")
        ts = tuple(_finite(t, f"{field}.times[{k}]") for k, t in enumerate(times))
        rs = tuple(_finite(r, f"{field}.rates[{k}]") for k, r in enumerate(rates))
        for k in range(1, len(ts)):
            if ts[k] <= ts[k - 1]:
                raise InputError(
                    f"{field}.times[{k}]",
                    f"{ts[k]} is not after the sample before it ({ts[k - 1]}): "
                    "times must be strictly increasing",
                )
        for k, r in enumerate(rs):
            if r < 0:
                raise InputError(f"{field}.rates[{k}]", f"{r} is negative")
        return cls(ts, rs)

    @property
    def start(self) -> float:
        return self.times[0]

    @property
    def end(self) -> float:
        return self.times[-1]

    def at(self, t: float) -> float:
        """The rate held at `t`: the last sample at or before it (the first before the trace)."""
        k = bisect.bisect_right(self.times, t) - 1
        return self.rates[max(k, 0)]

    def mean(self, start: float, end: float) -> float | None:
        """The time-weighted mean over `[start, end)`, or None when the window is empty."""
        if end <= start:
            return None
        total = 0.0
        k = max(bisect.bisect_right(self.times, start) - 1, 0)
        cursor = start
        while cursor < end:
            next_t = self.times[k + 1] if k + 1 < len(self.times) else math.inf
            stop = min(next_t, end)
            total += self.rates[k] * (stop - cursor)
            cursor = stop
            k += 1
        return total / (end - start)

    def first(self, start: float, end: float, below: bool, level: float) -> float | None:
        """When, in `[start, end)`, the held rate first goes below (or reaches) `level`."""
        if (self.at(start) < level) == below:
            return start
        k = bisect.bisect_right(self.times, start)
        while k < len(self.times) and self.times[k] < end:
            if (self.rates[k] < level) == below:
                return self.times[k]
            k += 1
        return None


@dataclass(frozen=True, slots=True)
class EventMarks:
    """One degradation: when it was made, and (from a monitor's log) when it was seen and undone.

    `detected` is the monitor's detection; `switched` is when its fail-over
    action had its rules in the switch. Either may be unknown.
    """

    degraded: float
    detected: float | None = None
    switched: float | None = None

    def check(self, field: str) -> None:
        _finite(self.degraded, f"{field}.degraded")
        for name, value in (("detected", self.detected), ("switched", self.switched)):
            if value is None:
                continue
            _finite(value, f"{field}.{name}")
            if value < self.degraded:
                raise InputError(
                    f"{field}.{name}", f"{value} is before the degradation at {self.degraded}"
                )
