"""Rates per interval, totals and a status from one direction's samples.

A sample holds cumulative counters; an interval is the step between two
consecutive samples. A counter that went down between them was reset (the
switch restarted, or the flow was re-added): what it counted since the reset
is all that is known, so the interval takes the new value as its increase.
That undercounts the interval but never gives a negative rate.

Status, from the latest intervals:

- `unmeasured`: fewer than two samples, so no interval yet;
- `idle`: in the latest interval the sender offered less than the booked
  rate, so a low delivered rate says nothing about the network;
- `degraded`: in each of the last `sustain` intervals the sender offered at
  least the booked rate and less than `floor` of the booked rate arrived;
- `ok` otherwise.

Why a sustained window (3 intervals by default, 15 s at the default 5 s
sampling): one short interval is usually not the network's fault. A TCP
sender halves its window on a loss and takes a few round trips to grow it
back; and the entry and egress counters sit on different switches, read
one after the other, so an interval's delivered bytes can lag its offered
bytes by the time between the reads. Three short intervals in a row are a
shortfall an operator should hear of, still soon enough to act during a
transfer.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from braid.core.delivery.samples import DeliverySample
from braid.core.errors import InputError

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_SUSTAIN",
    "DeliveryInterval",
    "DeliveryReport",
    "DeliveryStatus",
    "DeliveryTotals",
    "counted_between",
    "delivery_report",
]

DEFAULT_FLOOR: Final = 0.95
DEFAULT_SUSTAIN: Final = 3


class DeliveryStatus(enum.StrEnum):
    OK = "ok"
    DEGRADED = "degraded"
    IDLE = "idle"
    UNMEASURED = "unmeasured"


@dataclass(frozen=True, slots=True)
class DeliveryInterval:
    """What one interval carried, as rates (bit/s), and whether it fell short."""

    start: int
    end: int
    offered_bps: float
    delivered_bps: float
    dropped_bps: float
    booked_share: float  # delivered / booked
    short: bool  # offered at least the booked rate, delivered under the floor
    reset: bool  # a counter went down: the interval only counts since the reset


@dataclass(frozen=True, slots=True)
class DeliveryTotals:
    """Sums over every interval: bytes, packets, and the seconds they span."""

    seconds: int = 0
    offered_bytes: int = 0
    delivered_bytes: int = 0
    dropped_bytes: int = 0
    offered_packets: int = 0
    delivered_packets: int = 0
    dropped_packets: int = 0

    def __add__(self, other: DeliveryTotals) -> DeliveryTotals:
        return DeliveryTotals(*(getattr(self, f) + getattr(other, f) for f in _TOTALS))


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    booked_bps: int
    intervals: tuple[DeliveryInterval, ...]
    totals: DeliveryTotals
    status: DeliveryStatus

    @property
    def delivered_share(self) -> float | None:
        """The mean delivered rate over all intervals against the booked rate (None: none)."""
        if self.totals.seconds == 0:
            return None
        return self.totals.delivered_bytes * 8 / self.totals.seconds / self.booked_bps


def delivery_report(
    samples: Sequence[DeliverySample],
    booked_bps: int,
    *,
    floor: float = DEFAULT_FLOOR,
    sustain: int = DEFAULT_SUSTAIN,
) -> DeliveryReport:
    """Intervals between consecutive samples (ordered by time; equal times keep the last)."""
    if booked_bps <= 0:
        raise InputError("booked_bps", f"must be positive, got {booked_bps}")
    if not 0 < floor <= 1:
        raise InputError("floor", f"must lie in (0, 1], got {floor}")
    if sustain < 1:
        raise InputError("sustain", f"must be at least 1, got {sustain}")
    by_time = {s.at: s for s in samples}
    ordered = [by_time[t] for t in sorted(by_time)]
    steps = [_step(a, b) for a, b in pairwise(ordered)]
    intervals = tuple(_interval(step, booked_bps, floor) for step in steps)
    totals = sum((_counted(step) for step in steps), DeliveryTotals())
    return DeliveryReport(booked_bps, intervals, totals, _status(intervals, booked_bps, sustain))


def counted_between(before: DeliverySample, after: DeliverySample) -> DeliveryTotals:
    """What one direction's counters counted from sample `before` to `after` (a counter
    that went down counts from zero), as a report's totals add it up."""
    return _counted(_step(before, after))


@dataclass(frozen=True, slots=True)
class _Step:
    start: int
    end: int
    offered_bytes: int
    delivered_bytes: int
    dropped_bytes: int
    offered_packets: int
    delivered_packets: int
    dropped_packets: int
    reset: bool


_COUNTERS: Final = (
    "offered_bytes",
    "delivered_bytes",
    "dropped_bytes",
    "offered_packets",
    "delivered_packets",
    "dropped_packets",
)
_TOTALS: Final = ("seconds", *_COUNTERS)


def _step(a: DeliverySample, b: DeliverySample) -> _Step:
    before = [getattr(a, name) for name in _COUNTERS]
    after = [getattr(b, name) for name in _COUNTERS]
    # A counter that went down restarted from zero: it counted `after` since.
    grown = [y - x if y >= x else y for x, y in zip(before, after, strict=True)]
    reset = any(y < x for x, y in zip(before, after, strict=True))
    offered, delivered, dropped, offered_packets, delivered_packets, dropped_packets = grown
    return _Step(
        a.at,
        b.at,
        offered,
        delivered,
        dropped,
        offered_packets,
        delivered_packets,
        dropped_packets,
        reset,
    )


def _counted(step: _Step) -> DeliveryTotals:
    return DeliveryTotals(
        step.end - step.start,
        step.offered_bytes,
        step.delivered_bytes,
        step.dropped_bytes,
        step.offered_packets,
        step.delivered_packets,
        step.dropped_packets,
    )


def _interval(step: _Step, booked_bps: int, floor: float) -> DeliveryInterval:
    seconds = step.end - step.start
    offered = step.offered_bytes * 8 / seconds
    delivered = step.delivered_bytes * 8 / seconds
    dropped = step.dropped_bytes * 8 / seconds
    short = offered >= booked_bps and delivered < floor * booked_bps
    return DeliveryInterval(
        step.start, step.end, offered, delivered, dropped, delivered / booked_bps, short, step.reset
    )


def _status(intervals: Sequence[DeliveryInterval], booked_bps: int, sustain: int) -> DeliveryStatus:
    if not intervals:
        return DeliveryStatus.UNMEASURED
    if intervals[-1].offered_bps < booked_bps:
        return DeliveryStatus.IDLE
    latest = intervals[-sustain:]
    if len(latest) == sustain and all(i.short for i in latest):
        return DeliveryStatus.DEGRADED
    return DeliveryStatus.OK
