"""The workload of the success-rate study (seed 000 §6.1–6.2), drawn from a seeded generator.

Reading of the paper's setup (docs/simulation.md explains the choice):

* A domain's *schedule* has `entries` entries; entry i is the bandwidth the
  domain has free during time slot i (all slots equally long), drawn
  uniformly from 0..capacity, independently per entry and per domain.
* A *request* is a window of 1..max_duration whole slots starting at a
  uniformly drawn slot (the window lies inside the schedule) and a bandwidth
  `demand * scale`, with `demand` uniform in (0, 1] (in millionths).
* *Calibration* picks `scale` (the largest request, bit/s) so that a fixed
  share of an independent calibration sample (half, as in the paper) fits on
  one domain: a request fits iff its bandwidth is at most the domain's
  smallest free entry over its window, so the scale is the matching quantile
  of min-free / demand — exact, no search.

Pure: every function takes its random generator; nothing reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from braid.core.errors import InputError

PPM = 1_000_000
Schedules = npt.NDArray[np.int64]  # shape (domains, entries), free bit/s per slot


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Parameters of the study; the defaults are the paper's (plus braid's slack)."""

    entries: int = 1000
    requests: int = 100
    repetitions: int = 32
    domains: int = 4
    capacity: int = 10_000_000_000
    max_duration: int = 1
    slack: int = 4
    target_single: float = 0.5
    calibration_requests: int = 12_800

    def check(self) -> None:
        """Raise `InputError` naming the first parameter out of range."""
        positive = {
            "entries": self.entries,
            "requests": self.requests,
            "repetitions": self.repetitions,
            "domains": self.domains,
            "capacity": self.capacity,
            "max_duration": self.max_duration,
            "calibration_requests": self.calibration_requests,
        }
        for name, value in positive.items():
            if value < 1:
                raise InputError(name, f"must be at least 1, got {value}")
        if self.max_duration > self.entries:
            raise InputError("max_duration", f"longer than the schedule ({self.entries} entries)")
        if self.slack < 0:
            raise InputError("slack", f"must be at least 0, got {self.slack}")
        if not 0.0 < self.target_single < 1.0:
            raise InputError("target_single", f"must lie in (0, 1), got {self.target_single}")


@dataclass(frozen=True, slots=True)
class SimRequest:
    """One request: slots [start, start + duration) at `bandwidth` bit/s."""

    start: int
    duration: int
    bandwidth: int


@dataclass(frozen=True, slots=True)
class Demands:
    """Requests before scaling: windows and demand in millionths of the scale."""

    starts: npt.NDArray[np.int64]
    durations: npt.NDArray[np.int64]
    demand_ppm: npt.NDArray[np.int64]

    def scaled(self, scale: int) -> tuple[SimRequest, ...]:
        """The requests at `scale` bit/s for a demand of one (at least 1 bit/s each)."""
        return tuple(
            SimRequest(int(s), int(d), max(1, int(u) * scale // PPM))
            for s, d, u in zip(self.starts, self.durations, self.demand_ppm, strict=True)
        )


def draw_schedules(rng: np.random.Generator, config: SimConfig) -> Schedules:
    """`config.domains` schedules of `config.entries` free-bandwidth entries each."""
    shape = (config.domains, config.entries)
    return rng.integers(0, config.capacity, size=shape, endpoint=True, dtype=np.int64)


def draw_demands(rng: np.random.Generator, config: SimConfig, count: int) -> Demands:
    """`count` request windows inside the schedule and their unscaled demands."""
    durations = rng.integers(1, config.max_duration, size=count, endpoint=True, dtype=np.int64)
    starts = rng.integers(0, config.entries - durations, endpoint=True, dtype=np.int64)
    demand = rng.integers(1, PPM, size=count, endpoint=True, dtype=np.int64)
    return Demands(starts, durations, demand)


def window_min(schedules: Schedules, domain: int, start: int, duration: int) -> int:
    """The free bandwidth a domain can promise over the whole window (its offer)."""
    return int(schedules[domain, start : start + duration].min())


def calibrate_scale(rng: np.random.Generator, config: SimConfig) -> int:
    """The request scale (bit/s) at which `target_single` of a fresh sample fits one domain.

    Request i fits iff demand_i * scale / 1e6 <= m_i (m_i its window's
    smallest free entry), i.e. iff scale <= ratio_i = m_i * 1e6 / demand_i.
    Sorting the ratios and taking the one at the target rank makes that
    share of the sample fit, whatever the durations.
    """
    config.check()
    single = SimConfig(
        entries=config.entries,
        domains=1,
        capacity=config.capacity,
        max_duration=config.max_duration,
    )
    ratios: list[int] = []
    # One schedule per batch of `requests`, as in a repetition, so that the
    # sample sees many schedules, not one.
    for first in range(0, config.calibration_requests, config.requests):
        schedules = draw_schedules(rng, single)
        count = min(config.requests, config.calibration_requests - first)
        demands = draw_demands(rng, single, count)
        ratios.extend(
            window_min(schedules, 0, int(s), int(d)) * PPM // int(u)
            for s, d, u in zip(demands.starts, demands.durations, demands.demand_ppm, strict=True)
        )
    ratios.sort()
    # The scale must not exceed the ratio of the request ranked (1 - target) from the top.
    rank = len(ratios) - max(1, round(config.target_single * len(ratios)))
    return max(1, ratios[rank])
