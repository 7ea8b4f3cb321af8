"""braid core benchmark: the four queries, a k=4 split and `braid plan`, against the OSCARS way.

Run from the repository root:

    .venv/bin/python bench/core_bench.py [--quick] [--json out.json]

See bench/README.md for what is measured and how to read the table.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from baseline import Rows
from measure import (
    Bench,
    Budget,
    Candidates,
    Query,
    Row,
    make_queries,
    percentile_ms,
    run_all_slots,
    run_earliest,
    run_fixed,
    run_split,
    run_widest,
)
from plan_bench import make_requests, run_cli, run_in_process
from report import print_table, summary_rows
from workload import World, build_world

TOPOLOGIES = ("Esnet", "Geant2012", "Cogentco", "Kdl")
PLAN_TOPOLOGY = "Esnet"


@dataclass(frozen=True)
class Settings:
    bookings: int
    queries: int
    budget: Budget
    plan_requests: int
    seed: int
    topologies: tuple[str, ...]


def parse_args(argv: list[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer queries (under 2 minutes)")
    parser.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--bookings", type=int, default=10_000, help="bookings tried per network")
    parser.add_argument(
        "--topologies", default=",".join(TOPOLOGIES), help="comma-separated Topology Zoo names"
    )
    args = parser.parse_args(argv)
    if args.quick:
        budget, queries, requests = Budget(1.5, 3, 2), 30, 1500
    else:
        budget, queries, requests = Budget(15.0, 20, 10), 300, 5000
    names = tuple(n for n in args.topologies.split(",") if n)
    return Settings(args.bookings, queries, budget, requests, args.seed, names), args


def progress_bar(console: Console, width: int = 34) -> Progress:
    return Progress(
        TextColumn(f"{{task.description:<{width}}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


@contextmanager
def task(progress: Progress, label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A progress task whose bar is filled when the work stops early (budget spent)."""
    task_id = progress.add_task(label, total=total)
    yield lambda n: progress.advance(task_id, n)
    progress.update(task_id, completed=total)
    progress.remove_task(task_id)


def bench_world(world: World, settings: Settings, progress: Progress) -> list[Row]:
    """All query kinds on one network, each on the same queries and unchanged state."""
    queries = make_queries(world, settings.queries, settings.seed)
    rows = Rows(world.network)
    bench = Bench(world, rows, Candidates(world.topology), lambda n: None, settings.budget)
    kinds: list[tuple[str, Callable[[Bench, list[Query]], Row]]] = [
        ("fixed", run_fixed),
        ("earliest", run_earliest),
        ("all-slots 7d", run_all_slots),
        ("max-bandwidth", run_widest),
    ]
    out = []
    for label, run in kinds:
        with task(progress, f"{world.name}: {label}", len(queries)) as tick:
            bench.tick = tick
            out.append(run(bench, queries))
    out.append(bench_split(bench, queries, settings, progress))
    for row in out:
        row.extra.setdefault("yen_k_paths_mean_ms", bench.candidates.mean_ms())
    return out


def bench_split(bench: Bench, queries: list[Query], settings: Settings, progress: Progress) -> Row:
    try:
        from braid.core.multipath import split_fixed
    except ImportError as exc:  # a colleague is writing it; the row says so
        row = bench.row("split k=4")
        row.note = f"skipped: braid.core.multipath not importable ({exc})"
        return row
    with task(progress, f"{bench.world.name}: split k=4", len(queries)) as tick:
        bench.tick = tick
        return run_split(bench, queries, split_fixed, settings.seed)


def bench_plan(world: World, settings: Settings, progress: Progress) -> dict[str, Any]:
    """`braid plan` on a fresh planner: in process, then once through the real CLI."""
    lines = make_requests(world.topology, world.sizes, settings.plan_requests, settings.seed)
    with task(progress, f"{world.name}: braid plan in process", len(lines)) as tick:
        inproc = run_in_process(world.topology, lines, tick)
    with task(progress, f"{world.name}: braid plan CLI", 1) as tick:
        cli = run_cli(world.file, lines)
        tick(1)
    per = inproc.pop("per_decision_ns")
    inproc["median_ms"] = percentile_ms(per, 0.5)
    inproc["p95_ms"] = percentile_ms(per, 0.95)
    return {"requests": len(lines), "in_process": inproc, "cli": cli}


def world_summary(world: World) -> dict[str, Any]:
    return {
        "topology": world.name,
        "nodes": len(world.topology.nodes),
        "links": len(world.topology.links),
        "bookings_tried": world.tried,
        "bookings_placed": world.placed,
        "setup_s": round(world.setup_s, 2),
        "booking_size_mbps": [
            round(world.sizes.lo / 1e6),
            round(world.sizes.lo * 16 / 1e6),
        ],
        **{k: round(v, 4) for k, v in world.load.items()},
    }


def run(
    settings: Settings, console: Console
) -> tuple[list[dict[str, Any]], list[Row], dict[str, Any]]:
    worlds, rows, plan = [], [], {}
    with progress_bar(console) as progress:
        for name in settings.topologies:
            with task(progress, f"{name}: booking the week", settings.bookings) as tick:
                world = build_world(name, settings.bookings, settings.seed, tick)
            worlds.append(world_summary(world))
            console.print(_load_line(worlds[-1]))
            rows += bench_world(world, settings, progress)
            if name == PLAN_TOPOLOGY:
                plan = bench_plan(world, settings, progress)
    return worlds, rows, plan


def _load_line(w: dict[str, Any]) -> str:
    return (
        f"[bold]{w['topology']}[/]: {w['nodes']} nodes, {w['links']} links; "
        f"{w['bookings_placed']}/{w['bookings_tried']} bookings placed in {w['setup_s']} s; "
        f"link directions: mean utilisation {w['mean_utilisation']:.0%}, "
        f"p90 {w['p90_utilisation']:.0%}, {w['share_peak_over_90pct']:.0%} peak ≥ 90 %, "
        f"{w['share_peak_full']:.0%} full at some instant"
    )


def main(argv: list[str] | None = None) -> int:
    settings, args = parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console.width = 200  # a file or pipe gets the whole table, not 80 columns
    began = time.perf_counter_ns()
    worlds, rows, plan = run(settings, console)
    elapsed = (time.perf_counter_ns() - began) / 1e9
    table_rows = summary_rows(rows, plan)
    print_table(console, table_rows, title=f"braid core benchmark ({elapsed:.0f} s)")
    bugs = [bug for row in rows for bug in row.bugs]
    cli_failed = bool(plan.get("cli", {}).get("exit_code"))
    for bug in bugs[:20]:
        console.print(f"[bold red]BUG[/] {bug}")
    if cli_failed:
        console.print(f"[bold red]braid plan CLI failed[/]: {plan['cli']['stderr_tail']}")
    if args.json:
        document = {
            "settings": _settings_dict(settings),
            "machine": {"python": platform.python_version(), "platform": platform.platform()},
            "elapsed_s": round(elapsed, 1),
            "worlds": worlds,
            "rows": table_rows,
            "plan": plan,
            "bugs": bugs,
        }
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
    return 1 if bugs or cli_failed else 0


def _settings_dict(settings: Settings) -> dict[str, Any]:
    return {
        "bookings": settings.bookings,
        "queries": settings.queries,
        "budget_s_per_row": settings.budget.seconds,
        "plan_requests": settings.plan_requests,
        "seed": settings.seed,
        "topologies": list(settings.topologies),
        "timing": "wall time per query, time.perf_counter_ns",
    }


if __name__ == "__main__":
    sys.exit(main())
