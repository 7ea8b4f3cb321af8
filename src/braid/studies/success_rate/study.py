"""`braid sim success-rate`: seed, calibrate, run the repetitions (optionally in parallel), report.

Seeding: one `numpy.random.SeedSequence(seed)` spawns a child for the
calibration and one per repetition, so a repetition's draws depend only on
the seed and its index — the result is the same for any number of workers.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from braid.studies.success_rate.evaluate import BRAID_STRATEGIES, PAPER_STRATEGIES
from braid.studies.success_rate.sim import (
    PAPER_FIGURES,
    Counts,
    SuccessRates,
    repetition_counts,
    summarize,
)
from braid.studies.success_rate.workload import SimConfig, calibrate_scale

Progress = Callable[[int, int], None]  # (repetitions done, repetitions in all)


@dataclass(frozen=True, slots=True)
class SuccessRateStudy:
    """What one run of the study found."""

    config: SimConfig
    seed: int
    scale: int
    rates: SuccessRates

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready summary; success rates in per cent, bandwidths in Mbit/s."""
        ours = self.rates.ours()
        return {
            "study": "success-rate",
            "seed": self.seed,
            "config": asdict(self.config),
            "largest_request_mbps": self.scale / 1e6,
            "paper_strategies": list(PAPER_STRATEGIES),
            "braid_strategies": list(BRAID_STRATEGIES),
            "domains": list(self.rates.domains),
            "success_percent": {
                s: [round(100 * x, 2) for x in self.rates.mean[s]] for s in self.rates.strategies
            },
            "stdev_percent": {
                s: [round(100 * x, 2) for x in self.rates.stdev[s]] for s in self.rates.strategies
            },
            "paper_vs_braid": [
                {"figure": key, "paper": PAPER_FIGURES[key], "braid": round(ours[key], 2)}
                for key in PAPER_FIGURES
            ],
        }


def run_success_rate(
    config: SimConfig,
    seed: int,
    *,
    workers: int = 1,
    progress: Progress | None = None,
) -> SuccessRateStudy:
    """Run the study; `workers` > 1 spreads repetitions over that many processes."""
    config.check()
    if workers < 1:
        raise ValueError(f"workers: must be at least 1, got {workers}")
    root = np.random.SeedSequence(seed)
    calibration, *children = root.spawn(config.repetitions + 1)
    scale = calibrate_scale(np.random.default_rng(calibration), config)
    tasks = [(config, scale, _entropy(child)) for child in children]
    counts: list[Counts] = []
    if workers == 1 or config.repetitions == 1:
        for task in tasks:
            counts.append(_run(task))
            _report(progress, len(counts), len(tasks))
    else:
        with multiprocessing.get_context().Pool(min(workers, len(tasks))) as pool:
            for result in pool.imap(_run, tasks):
                counts.append(result)
                _report(progress, len(counts), len(tasks))
    return SuccessRateStudy(config, seed, scale, summarize(config, counts))


def _entropy(child: np.random.SeedSequence) -> tuple[int, ...]:
    state = child.generate_state(4, dtype=np.uint32)
    return tuple(int(x) for x in state)


def _run(task: tuple[SimConfig, int, tuple[int, ...]]) -> Counts:
    config, scale, seed = task
    return repetition_counts(config, scale, seed)


def _report(progress: Progress | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)
