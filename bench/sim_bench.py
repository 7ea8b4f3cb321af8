"""How long the success-rate study takes, one worker against several.

`braid sim success-rate` with the paper's setup (32 repetitions of 100
requests over 1,000-entry schedules), run in-process with one worker (the
baseline, measured in the same run) and with `--workers N`. The two results
must be identical; the times are printed with their ratio. No floor: this is
a report, not a gate.
"""

from __future__ import annotations

import argparse
import os
import time

from braid.studies.success_rate.study import run_success_rate
from braid.studies.success_rate.workload import SimConfig


def timed(config: SimConfig, seed: int, workers: int) -> tuple[float, dict[str, object]]:
    began = time.perf_counter()
    study = run_success_rate(config, seed, workers=workers)
    return time.perf_counter() - began, study.as_json()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-duration", type=int, default=1)
    args = parser.parse_args()
    config = SimConfig(max_duration=args.max_duration)
    alone, first = timed(config, args.seed, 1)
    shared, second = timed(config, args.seed, args.workers)
    runs = f"{config.repetitions} x {config.requests} requests"
    print(f"success-rate study, {runs}, seed {args.seed}")
    print(f"  1 worker:   {alone:6.2f} s (baseline)")
    print(f"  {args.workers} workers:  {shared:6.2f} s  ratio {alone / shared:.2f}x")
    print(
        f"  {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
        f"results identical: {first == second}"
    )
    return 0 if first == second else 1


if __name__ == "__main__":
    raise SystemExit(main())
