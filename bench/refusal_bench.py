"""Split refusals on Esnet: what `Planner.decide` costs for a split it must refuse.

Run from the repository root:

    .venv/bin/python bench/refusal_bench.py [--requests 400] [--rounds 2] [--baseline REV]

On Esnet with a week of 10,000 bookings (`workload.build_world`), fixed-window
requests with `max_paths` 2-4 at twice the bookings' sizes are decided one by
one, nothing committed, so every one sees the same state. A refusal includes
its alternatives (the earliest start over as many paths, the most the window
offers over them), as the service answers it. The median CPU and wall time
per refused decision is printed for this checkout and for the baseline: the
same script run in a subprocess on the source of `--baseline` (a git
revision, by default the last one before refusals were made fast), rounds
alternating so that both see the same machine load. Every decision of both
must be identical, or the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from revisions import baseline_source
from workload import MAX_DURATION, MIN_DURATION, T0, WEEK, build_world, log_uniform

# Today's planner before refusals were proved hopeless early (issue 16).
DEFAULT_BASELINE = "788bd05"
REFUSED_SCALE = 2.0  # requests ask twice the bookings' sizes, so about half are refused
FLOOR_MS = 3.0


def measure(requests: int, bookings: int, seed: int) -> dict[str, Any]:
    """Decide the requests on this interpreter's braid; times of the refused ones, and a digest."""
    from braid.core.planning.decisions import Refused
    from braid.core.planning.planner import Planner
    from braid.core.planning.requests import Request

    world = build_world("Esnet", bookings, seed, lambda _: None)
    planner = Planner(world.topology)
    for booking in world.network.bookings.values():
        planner.network.commit(booking)
    rng = random.Random(f"{seed}:split refusals")
    nodes = sorted(world.topology.nodes)
    cpu, wall, digest = [], [], hashlib.sha256()
    for i in range(requests):
        src, dst = rng.sample(nodes, 2)
        duration = int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
        start = T0 + rng.randrange(WEEK - duration)
        need = world.sizes.draw(rng, REFUSED_SCALE)
        end, paths = start + duration, rng.randint(2, 4)
        request = Request(f"q{i}", "fixed", src, dst, need, start, end, max_paths=paths)
        began_cpu, began = time.thread_time_ns(), time.perf_counter_ns()
        decision, _ = planner.decide(request)
        ended, ended_cpu = time.perf_counter_ns(), time.thread_time_ns()
        digest.update(fingerprint(decision).encode())
        if isinstance(decision, Refused):
            cpu.append((ended_cpu - began_cpu) / 1e6)
            wall.append((ended - began) / 1e6)
    return {"cpu_ms": cpu, "wall_ms": wall, "decisions": digest.hexdigest()}


def fingerprint(decision: Any) -> str:
    """The decision's repr; a refusal's as its words and alternatives, which every
    revision gives alike however it keeps its reason."""
    from braid.core.planning.decisions import Refused

    if isinstance(decision, Refused):
        kept = (decision.id, decision.reason, decision.alternatives, decision.max_bandwidth)
        return f"Refused{kept!r}"
    return repr(decision)


def run_on(source: Path | None, args: argparse.Namespace) -> dict[str, Any]:
    """`measure` in a subprocess on `source` (this checkout's braid when None)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    command = [sys.executable, __file__, "--measure-only", *_sizes(args)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _sizes(args: argparse.Namespace) -> list[str]:
    return [
        f"--requests={args.requests}",
        f"--bookings={args.bookings}",
        f"--seed={args.seed}",
    ]


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    cpu = [t for run in runs for t in run["cpu_ms"]]
    wall = [t for run in runs for t in run["wall_ms"]]
    ordered = sorted(cpu)
    return {
        "refused": len(runs[0]["cpu_ms"]),
        "cpu_median_ms": statistics.median(cpu),
        "cpu_p90_ms": ordered[int(0.9 * (len(ordered) - 1))],
        "cpu_mean_ms": statistics.fmean(cpu),
        "wall_median_ms": statistics.median(wall),
        "decisions": {run["decisions"] for run in runs},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400, help="split requests decided")
    parser.add_argument("--bookings", type=int, default=10_000, help="bookings in the week")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each, alternating")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision to compare")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure_only:
        print(json.dumps(measure(args.requests, args.bookings, args.seed)))
        return 0
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="braid-refusal-bench-") as scratch:
        old_source = baseline_source(args.baseline, Path(scratch))
        old: list[dict[str, Any]] = []
        new: list[dict[str, Any]] = []
        for _ in range(args.rounds):
            old.append(run_on(old_source, args))
            new.append(run_on(None, args))
    return report(summary(old), summary(new), args, load_before)


def report(
    old: dict[str, Any], new: dict[str, Any], args: argparse.Namespace, load_before: float
) -> int:
    same = old["decisions"] == new["decisions"] and len(new["decisions"]) == 1
    ratio = old["cpu_median_ms"] / new["cpu_median_ms"]
    print(
        f"Esnet, {args.bookings} bookings, {args.requests} split requests (max_paths 2-4) "
        f"x {args.rounds} rounds; load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(f"{'':28}{'refused':>8}{'CPU p50':>10}{'CPU p90':>10}{'CPU mean':>10}{'wall p50':>10}")
    for label, row in ((f"baseline {args.baseline}", old), ("this checkout", new)):
        print(
            f"{label:28}{row['refused']:>8}{row['cpu_median_ms']:>8.2f}ms"
            f"{row['cpu_p90_ms']:>8.2f}ms{row['cpu_mean_ms']:>8.2f}ms{row['wall_median_ms']:>8.2f}ms"
        )
    met = "met" if new["cpu_median_ms"] <= FLOOR_MS else "NOT met"
    print(f"median CPU per split refusal: {ratio:.1f}x faster; floor <= {FLOOR_MS:g} ms: {met}")
    print(f"decisions identical to the baseline's: {'yes' if same else 'NO'}")
    if args.json:
        figures = {"baseline": old, "current": new, "ratio": ratio, "identical": same}
        for row in (old, new):
            row["decisions"] = sorted(row["decisions"])
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
