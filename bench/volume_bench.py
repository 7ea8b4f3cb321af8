"""Volume transfers against fixed-rate bookings: accepted share and admission latency (issue 32).

Part a, **share**: the success-rate study's requests (its schedules, its
calibrated scale, its seeds) become volumes (bits = rate x duration,
deadline = end) and are offered online, in the order drawn, to three
planners over the same network of parallel domains: fixed-rate on one path,
fixed-rate over up to k paths, and `plan_volume` over up to k paths. Each
accepted request is booked, so later ones see it. A volume may start
(`--not-before`) at the fixed booking's start (`start`, the strict
conversion) or as soon as it is asked (`asked`: every request is offered at
the start of the horizon, as "40 TB by Friday" is asked today).

Part b, **latency**: on Esnet with a busy week of bookings (`book_week`),
`plan_volume` against the fixed-slot query (`fixed_path`) on the same
random pairs and windows, in the same run; nothing is committed.

    .venv/bin/python bench/volume_bench.py                 # both parts
    .venv/bin/python bench/volume_bench.py --part share --repetitions 8
    .venv/bin/python bench/volume_bench.py --part latency --queries 100
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.model.topology import topology_from_dict
from braid.core.multipath import SplitPlan, split_fixed
from braid.core.schedule import fixed_path
from braid.core.volume import VolumeAsk, VolumePlan, plan_volume
from braid.studies.success_rate.workload import (
    SimConfig,
    SimRequest,
    calibrate_scale,
    draw_demands,
    draw_schedules,
)
from workload import MAX_DURATION, MIN_DURATION, T0, WEEK, build_world, log_uniform

SLOT = 60  # seconds in one of the study's schedule entries (only ratios matter)
PLANNERS = ("fixed 1 path", "fixed k paths", "volume k paths")
FLOOR_POINTS = 15.0  # the share volumes must gain over both fixed-rate planners
FLOOR_MEDIAN_MS = 50.0  # the volume admission median the issue allows on Esnet

Tick = Callable[[int], None]


# -- part a: accepted share ---------------------------------------------------------


def domains_network(schedules: np.ndarray, capacity: int) -> Network:
    """One link per domain between S and D, booked down to the schedule's free entries."""
    names = [f"d{i}" for i in range(len(schedules))]
    network = Network(
        topology_from_dict(
            {
                "nodes": [{"id": "S"}, {"id": "D"}],
                "links": [
                    {"id": n, "a": "S", "b": "D", "capacity": f"{capacity}bps", "latency_ms": 1}
                    for n in names
                ],
            }
        )
    )
    for name, free in zip(names, schedules, strict=True):
        path = Path(("S", "D"), (name,))
        for slot, left in enumerate(free.tolist()):
            if capacity - left > 0:
                booked = (Allocation(path, capacity - left),)
                network.commit(Booking(f"bg-{name}-{slot}", slot * SLOT, (slot + 1) * SLOT, booked))
    return network


def offer(
    planner: str, network: Network, rid: str, r: SimRequest, k: int, asked: bool = False
) -> bool:
    """Whether `planner` accepts request `r`; what it accepts is booked. `asked`: a volume
    may start when the request is offered (the horizon's start), not only at `r.start`."""
    start, end = r.start * SLOT, (r.start + r.duration) * SLOT
    if planner == "fixed 1 path":
        path = fixed_path(network, "S", "D", r.bandwidth, start, end)
        if path is None:
            return False
        network.commit(Booking(rid, start, end, (Allocation(path, r.bandwidth),)))
        return True
    if planner == "fixed k paths":
        plan = split_fixed(network, "S", "D", r.bandwidth, start, end, max_paths=k)
        if not isinstance(plan, SplitPlan):
            return False
        network.commit(Booking(rid, start, end, plan.allocations))
        return True
    ask = VolumeAsk("S", "D", r.bandwidth * (end - start), 0 if asked else start, end, max_paths=k)
    answer = plan_volume(network, ask)
    if not isinstance(answer, VolumePlan):
        return False
    for booking in answer.profile.bookings(rid):
        network.commit(booking)
    return True


@dataclass(frozen=True, slots=True)
class Shares:
    domains: int
    offered: int
    accepted: dict[str, int]

    def share(self, planner: str) -> float:
        return 100 * self.accepted[planner] / self.offered


def run_shares(config: SimConfig, seed: int, tick: Tick, asked: bool = False) -> Shares:
    """Every repetition of the study's workload offered to each planner; seeds as the study's."""
    root = np.random.SeedSequence(seed)
    calibration, *children = root.spawn(config.repetitions + 1)
    scale = calibrate_scale(np.random.default_rng(calibration), config)
    accepted = dict.fromkeys(PLANNERS, 0)
    for child in children:
        rng = np.random.default_rng(child)
        schedules = draw_schedules(rng, config)
        requests = draw_demands(rng, config, config.requests).scaled(scale)
        for planner in PLANNERS:
            network = domains_network(schedules, config.capacity)
            for i, r in enumerate(requests):
                accepted[planner] += offer(planner, network, f"r{i}", r, config.domains, asked)
        tick(1)
    return Shares(config.domains, config.repetitions * config.requests, accepted)


def share_table(results: list[Shares], config: SimConfig, not_before: str) -> Table:
    title = (
        f"accepted share, success-rate workload as volumes ({config.repetitions} repetitions "
        f"x {config.requests} requests, max_duration {config.max_duration} slots, "
        f"not_before = {not_before})"
    )
    table = Table(title=title)
    for column in ("domains k", *PLANNERS, "volume - 1 path", "volume - k paths", "ratio vs k"):
        table.add_column(column, justify="right")
    for s in results:
        one, many, vol = (s.share(p) for p in PLANNERS)
        gain = min(vol - one, vol - many)
        mark = "[green]" if gain >= FLOOR_POINTS else "[red]"
        table.add_row(
            str(s.domains),
            f"{one:.1f} %",
            f"{many:.1f} %",
            f"{vol:.1f} %",
            f"{vol - one:+.1f} pt",
            f"{mark}{vol - many:+.1f} pt",
            f"{vol / many:.2f}x" if many else "-",
        )
    return table


# -- part b: admission latency -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ask:
    src: str
    dst: str
    need: int
    start: int
    end: int


def latency_asks(
    nodes: list[str], sizes: Callable[[random.Random], int], count: int, seed: int
) -> list[Ask]:
    """Random pairs and windows in the week at twice the bookings' sizes, as core_bench asks."""
    rng = random.Random(f"{seed}:volume-latency")
    asks = []
    for _ in range(count):
        src, dst = rng.sample(nodes, 2)
        start = T0 + rng.randrange(WEEK)
        end = start + int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
        asks.append(Ask(src, dst, 2 * sizes(rng), start, end))
    return asks


def time_ms(call: Callable[[], object]) -> tuple[float, object]:
    began = time.perf_counter_ns()
    out = call()
    return (time.perf_counter_ns() - began) / 1e6, out


@dataclass
class Timed:
    """Latencies of one query kind, and how many of its answers admitted the ask."""

    ms: list[float] = field(default_factory=list)
    admitted: int = 0


def run_latency(network: Network, asks: list[Ask], k: int, tick: Tick) -> dict[str, Timed]:
    """Per ask: the fixed-slot query, then the volume one, on the same unchanged state."""
    fixed, volume = Timed(), Timed()
    for a in asks:
        ms, path = time_ms(partial(fixed_path, network, a.src, a.dst, a.need, a.start, a.end))
        fixed.ms.append(ms)
        fixed.admitted += path is not None
        ask = VolumeAsk(a.src, a.dst, a.need * (a.end - a.start), a.start, a.end, max_paths=k)
        ms, answer = time_ms(partial(plan_volume, network, ask))
        volume.ms.append(ms)
        volume.admitted += isinstance(answer, VolumePlan)
        tick(1)
    return {"fixed slot": fixed, "volume": volume}


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency_table(times: dict[str, Timed], placed: int, k: int) -> Table:
    table = Table(title=f"admission on Esnet, {placed} bookings in the week, max_paths {k}")
    for column in ("query", "n", "admitted", "median ms", "p90 ms", "floor ms", "meets floor"):
        table.add_column(column, justify="right")
    for name, timed in times.items():
        values = timed.ms
        median = statistics.median(values)
        floor = FLOOR_MEDIAN_MS if name == "volume" else None
        met = "-" if floor is None else ("[green]yes" if median <= floor else "[red]no")
        table.add_row(
            name, str(len(values)), str(timed.admitted), f"{median:.3f}",
            f"{quantile(values, 0.9):.3f}", "-" if floor is None else f"{floor:.0f}", met,
        )  # fmt: skip
    return table


# -- the command ---------------------------------------------------------------------


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description:<34}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


@contextmanager
def task(progress: Progress, label: str, total: int) -> Iterator[Tick]:
    task_id = progress.add_task(label, total=total)
    yield lambda n: progress.advance(task_id, n)
    progress.remove_task(task_id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("share", "latency", "both"), default="both")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--domains", default="2,4", help="k values of the share part")
    parser.add_argument("--repetitions", type=int, default=SimConfig().repetitions)
    parser.add_argument("--requests", type=int, default=SimConfig().requests)
    parser.add_argument("--max-duration", type=int, default=SimConfig().max_duration)
    parser.add_argument(
        "--not-before",
        default="start,asked",
        help="when a volume may start: start (the fixed booking's), asked (when offered); "
        "comma-separated runs each",
    )
    parser.add_argument("--bookings", type=int, default=10_000, help="the latency part's week")
    parser.add_argument("--queries", type=int, default=200, help="the latency part's asks")
    parser.add_argument("--max-paths", type=int, default=4, help="the latency part's k")
    args = parser.parse_args(argv)
    console = Console()
    with progress_bar(console) as progress:
        for not_before in args.not_before.split(",") if args.part in ("share", "both") else ():
            if not_before not in ("start", "asked"):
                parser.error(f"--not-before takes start or asked, not {not_before!r}")
            results, config = [], SimConfig()
            for k in (int(x) for x in args.domains.split(",") if x):
                config = SimConfig(
                    requests=args.requests, repetitions=args.repetitions, domains=k,
                    max_duration=args.max_duration,
                )  # fmt: skip
                with task(progress, f"share, k={k}, from {not_before}", config.repetitions) as tick:
                    results.append(run_shares(config, args.seed, tick, not_before == "asked"))
            console.print(share_table(results, config, not_before))
        if args.part in ("latency", "both"):
            with task(progress, "Esnet: booking the week", args.bookings) as tick:
                world = build_world("Esnet", args.bookings, args.seed, tick)
            asks = latency_asks(
                sorted(world.topology.nodes), world.sizes.draw, args.queries, args.seed
            )
            with task(progress, "Esnet: fixed slot vs volume", len(asks)) as tick:
                times = run_latency(world.network, asks, args.max_paths, tick)
            console.print(latency_table(times, world.placed, args.max_paths))
            medians = {name: statistics.median(t.ms) for name, t in times.items()}
            ratio = medians["volume"] / medians["fixed slot"]
            console.print(f"volume / fixed-slot median: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
