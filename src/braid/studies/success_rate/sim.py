"""The success-rate study of seed 000 §6.1–6.2 as pure functions (one repetition at a time).

`repetition_counts` draws one repetition's schedules and requests from its
own seed and counts, per strategy and number of domains, the requests
granted. `summarize` turns the counts of every repetition into rates. The
caller (braid.app.sim) seeds, parallelises and reports; results depend only
on the seed, not on how many workers ran them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from braid.studies.success_rate.evaluate import SIM_STRATEGIES, judge
from braid.studies.success_rate.workload import (
    SimConfig,
    draw_demands,
    draw_schedules,
)

Counts = tuple[tuple[int, ...], ...]  # [strategy][k - 1] -> requests granted

PAPER_FIGURES: Mapping[str, float] = {
    "single domain": 49.56,
    "two paths (Fig. 6b)": 85.0,
    "worst strategy (equal split)": 58.0,
    "four visible domains": 99.0,
}
"""The figures seed 000 reports (per cent): §6.1, §6.2 and Fig. 6b/6c."""


@dataclass(frozen=True, slots=True)
class SuccessRates:
    """Success rates (0..1) per strategy and number of domains, with their spread."""

    strategies: tuple[str, ...]
    domains: tuple[int, ...]
    mean: Mapping[str, tuple[float, ...]]
    stdev: Mapping[str, tuple[float, ...]]

    @property
    def single(self) -> float:
        """The single-domain, single-path baseline (any strategy with one domain)."""
        return self.mean["full-offers"][0]

    def ours(self) -> dict[str, float]:
        """Our figures matching `PAPER_FIGURES`, key for key (per cent)."""
        worst = min(self.mean["equal-split"][1:] or self.mean["equal-split"])
        four = self.mean["full-offers"][min(4, len(self.domains)) - 1]
        two = self.mean["full-offers"][min(2, len(self.domains)) - 1]
        values = (self.single, two, worst, four)
        return {key: 100 * v for key, v in zip(PAPER_FIGURES, values, strict=True)}


def repetition_counts(config: SimConfig, scale: int, seed: Sequence[int]) -> Counts:
    """Counts of granted requests for one repetition drawn from `seed` (entropy words)."""
    rng = np.random.default_rng(np.random.SeedSequence(list(seed)))
    schedules = draw_schedules(rng, config)
    requests = draw_demands(rng, config, config.requests).scaled(scale)
    return tuple(
        tuple(
            sum(judge(strategy, schedules, r, k, config.slack) for r in requests)
            for k in range(1, config.domains + 1)
        )
        for strategy in SIM_STRATEGIES
    )


def summarize(config: SimConfig, counts: Sequence[Counts]) -> SuccessRates:
    """Mean and standard deviation over repetitions of each success rate."""
    data = np.array(counts, dtype=np.float64) / config.requests  # (reps, strategies, k)
    mean = data.mean(axis=0)
    stdev = data.std(axis=0, ddof=1) if len(counts) > 1 else np.zeros_like(mean)
    return SuccessRates(
        strategies=SIM_STRATEGIES,
        domains=tuple(range(1, config.domains + 1)),
        mean={s: tuple(float(x) for x in mean[i]) for i, s in enumerate(SIM_STRATEGIES)},
        stdev={s: tuple(float(x) for x in stdev[i]) for i, s in enumerate(SIM_STRATEGIES)},
    )
