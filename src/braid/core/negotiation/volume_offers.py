"""Compose a volume transfer across domains out of their offers over time.

Pure: the orchestrator gathers, for every visible domain on the candidate
domain paths, a step function of offers over [not_before, horizon) (what the
domain could carry then, in total and per path) and hands them in here.

Per elementary interval of the union of all offers' breakpoints, the
carried rates per path are the ones `strategies.fill_from_offers` composes
from that interval's offers (a path is bounded by the minimum over its
domains, a domain on several paths bounds their sum), optionally capped in
total by `max_rate`. The transfer fills interval by interval from
`not_before` until the volume is reached; the last part is cut at the exact
second and split in two steps so that the profile's integral is exactly the
volume. So the completion is the earliest the per-interval composition
allows, and no step ever exceeds any domain's offer at any instant.

A blind domain gives no offers over time: paths through one are not used,
and when no path is left the request is refused naming the blind domain.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.negotiation.strategies import DomainPath, Offer, fill_from_offers

__all__ = [
    "OfferStep",
    "RateStep",
    "VolumeComposition",
    "VolumeRefusal",
    "compose_volume",
    "offers_at",
]


@dataclass(frozen=True, slots=True)
class OfferStep:
    """A domain's offer, constant over [start, end)."""

    start: int
    end: int
    offer: Offer


@dataclass(frozen=True, slots=True)
class RateStep:
    """Constant bit/s per candidate path (0 = unused) over [start, end)."""

    start: int
    end: int
    path_rates: tuple[int, ...]

    @property
    def rate(self) -> int:
        return sum(self.path_rates)

    @property
    def bits(self) -> int:
        return self.rate * (self.end - self.start)


@dataclass(frozen=True, slots=True)
class VolumeComposition:
    """The steps that move exactly `bits`, ending at `completion`."""

    bits: int
    steps: tuple[RateStep, ...]

    @property
    def completion(self) -> int:
        return self.steps[-1].end


@dataclass(frozen=True, slots=True)
class VolumeRefusal:
    """Why not, the most bits the offers carry by the deadline, and when all would be done."""

    reason: str
    most_by_deadline: int
    earliest_completion: int | None


Timelines = Mapping[str, Sequence[OfferStep]]


def compose_volume(
    bits: int,
    paths: Sequence[DomainPath],
    timelines: Timelines,
    not_before: int,
    deadline: int,
    *,
    horizon: int | None = None,
    max_rate: int | None = None,
) -> VolumeComposition | VolumeRefusal:
    """Move `bits` over `paths` within [not_before, deadline), as early as the offers allow.

    `timelines` maps each visible domain to its offers over time (sorted,
    non-overlapping; an instant no step covers offers nothing). Offers
    beyond `deadline` (up to `horizon`) only serve to tell a refusal's
    earliest completion. Raises `InputError` naming the field on malformed
    input; a volume that does not fit is a `VolumeRefusal`.
    """
    end = deadline if horizon is None else horizon
    _check(bits, paths, timelines, not_before, deadline, end, max_rate)
    usable = [i for i, path in enumerate(paths) if all(d in timelines for d in path)]
    if not usable:
        blind = next(d for path in paths for d in path if d not in timelines)
        reason = f"volume requests need offers over time; domain {blind} is blind"
        return VolumeRefusal(reason, 0, None)
    rates = _interval_rates(paths, timelines, usable, not_before, end, max_rate)
    steps, done = _fill(bits, rates)
    if done == bits and steps[-1].end <= deadline:
        return VolumeComposition(bits, _merge(steps))
    by_deadline = sum(_clip_bits(step, deadline) for step in steps)
    completion = steps[-1].end if done == bits else None
    reason = f"the offers carry only {by_deadline} of {bits} bits by the deadline"
    return VolumeRefusal(reason, by_deadline, completion)


def offers_at(timelines: Timelines, instant: int) -> dict[str, Offer]:
    """Each domain's offer at `instant` (a domain with no step there offers 0)."""
    current: dict[str, Offer] = {}
    for domain, steps in timelines.items():
        starts = [s.start for s in steps]
        index = bisect.bisect_right(starts, instant) - 1
        if index >= 0 and steps[index].start <= instant < steps[index].end:
            current[domain] = steps[index].offer
        else:
            current[domain] = Offer(domain, 0)
    return current


# -- per-interval composition --------------------------------------------------


def _interval_rates(
    paths: Sequence[DomainPath],
    timelines: Timelines,
    usable: Sequence[int],
    start: int,
    end: int,
    max_rate: int | None,
) -> list[RateStep]:
    """The most the offers carry per path on each elementary interval of [start, end)."""
    cuts = {start, end}
    for steps in timelines.values():
        cuts.update(t for s in steps for t in (s.start, s.end) if start < t < end)
    points = sorted(cuts)
    rates = []
    for left, right in itertools.pairwise(points):
        offers = offers_at(timelines, left)
        # An upper bound on what the paths could carry together; the fill keeps what fits.
        bound = sum(min(offers[d].cap(i) for d in paths[i]) for i in usable)
        if max_rate is not None:
            bound = min(bound, max_rate)
        amounts = fill_from_offers(bound, paths, offers, usable) if bound > 0 else ()
        rates.append(RateStep(left, right, amounts or (0,) * len(paths)))
    return rates


def _fill(bits: int, rates: Sequence[RateStep]) -> tuple[list[RateStep], int]:
    """Steps from the first interval on until `bits` are moved; the bits moved."""
    steps: list[RateStep] = []
    moved = 0
    for interval in rates:
        rate = interval.rate
        if rate == 0:
            continue
        left = bits - moved
        if interval.bits < left:
            steps.append(interval)
            moved += interval.bits
            continue
        steps.extend(_last_steps(interval, left))
        return steps, bits
    return steps, moved


def _last_steps(interval: RateStep, left: int) -> list[RateStep]:
    """Exactly `left` bits at the start of `interval`, in whole seconds.

    ceil(left / rate) seconds are needed; over them `left` is spread as
    evenly as integers allow: `extra` seconds at one bit/s more than the
    rest, so the integral is exact and never above the interval's rate.
    """
    seconds = -(-left // interval.rate)
    base, extra = divmod(left, seconds)
    start = interval.start
    steps = []
    if extra:
        steps.append(RateStep(start, start + extra, _shrink(interval.path_rates, base + 1)))
    if base:
        steps.append(RateStep(start + extra, start + seconds, _shrink(interval.path_rates, base)))
    return steps


def _shrink(amounts: Sequence[int], target: int) -> tuple[int, ...]:
    """`amounts` lowered from the last path back until they sum to `target`.

    Lowering a path's amount never breaks an offer (every bound is on a path
    or on a sum of paths), so the result fits wherever `amounts` did.
    """
    excess = sum(amounts) - target
    lowered = list(amounts)
    for index in reversed(range(len(lowered))):
        cut = min(excess, lowered[index])
        lowered[index] -= cut
        excess -= cut
    return tuple(lowered)


def _merge(steps: Sequence[RateStep]) -> tuple[RateStep, ...]:
    merged: list[RateStep] = []
    for step in steps:
        last = merged[-1] if merged else None
        if last is not None and last.end == step.start and last.path_rates == step.path_rates:
            merged[-1] = RateStep(last.start, step.end, last.path_rates)
        else:
            merged.append(step)
    return tuple(merged)


def _clip_bits(step: RateStep, deadline: int) -> int:
    return step.rate * max(0, min(step.end, deadline) - step.start)


def _check(
    bits: int,
    paths: Sequence[DomainPath],
    timelines: Timelines,
    not_before: int,
    deadline: int,
    end: int,
    max_rate: int | None,
) -> None:
    if isinstance(bits, bool) or not isinstance(bits, int) or bits <= 0:
        raise InputError("volume", f"must be a positive number of bits, got {bits!r}")
    if deadline <= not_before:
        raise InputError("deadline", f"must be after not_before ({not_before}), got {deadline}")
    if end < deadline:
        raise InputError("horizon", f"must not be before the deadline ({deadline}), got {end}")
    if not paths:
        raise InputError("paths", "no candidate domain path")
    if max_rate is not None and max_rate <= 0:
        raise InputError("max_rate", f"must be positive, got {max_rate}")
    for domain, steps in timelines.items():
        for before, after in itertools.pairwise(steps):
            if after.start < before.end:
                raise InputError(f"offers[{domain}]", f"steps overlap at {after.start}")
        for step in steps:
            if step.end <= step.start:
                raise InputError(f"offers[{domain}]", f"step [{step.start}, {step.end}) is empty")
