"""braid service benchmark: `POST /v1/reservations` through real `braid serve` processes.

Run from the repository root:

    .venv/bin/python bench/service_bench.py [--quick] [--json out.json]

On the Topology Zoo's Esnet (--default-capacity 100G) with 10,000 bookings in
the store, it measures the POST latency against one server on SQLite (single
client), the admission rate of 8 clients against two replicas on PostgreSQL
(then checks the store for overbooking), and, for ratios, the same POSTs
against one PostgreSQL replica and the same requests through
`ReservationService.reserve` in process (no HTTP). See bench/README.md.

The pieces: service_store (world, requests, stores), service_servers
(`braid serve` processes, CPU accounting), service_clients (HTTP clients),
service_report (figures and the table); this module runs the stages.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import Progress

from core_bench import progress_bar, task
from revisions import baseline_source
from service_baseline import build_store
from service_clients import client_capacity, in_process, many_clients, post_all, single_client
from service_report import (
    TableRow,
    compare_failures,
    comparison_rows,
    failures,
    figures,
    fsync_probe_ms,
    machine_line,
    ms,
    postgres_rows,
    print_table,
    sqlite_rows,
    write_json,
)
from service_servers import serving
from service_store import (
    TOPOLOGY,
    Body,
    Postgres,
    Sizes,
    World,
    bodies,
    copy_rows,
    copy_sqlite,
    make_world,
    overbooking,
    postgres_url,
    preload,
)

# Sizes relative to the preloaded bookings: the latency run asks for twice as
# much (so a fair share is refused and both answers are timed), the throughput
# run for the same sizes as the bookings in place (about half of them fit: what
# the store's load leaves, not a tuned share).
LATENCY_SCALE, THROUGHPUT_SCALE = 2.0, 1.0
WARM_UP_POSTS = 20
# GET /healthz per client thread when measuring what the clients can issue.
PROBE_REQUESTS = 300

T = TypeVar("T")


def parse_args(argv: list[str] | None) -> tuple[Sizes, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer POSTs (under 2 minutes)")
    parser.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--bookings", type=int, default=10_000, help="bookings in the store")
    parser.add_argument(
        "--repeat",
        type=int,
        help="PostgreSQL throughput runs per replica count, the median reported "
        "(default 3; --quick: 1)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="only the 2-replica PostgreSQL runs, this checkout's alternating with "
        "those of git revision REV (each on its own store), --repeat runs each",
    )
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.quick:
        sizes = Sizes(args.bookings, 200, 8, 60, args.seed)
    else:
        sizes = Sizes(args.bookings, 1000, 8, 250, args.seed)
    return sizes, args


@dataclass
class Run:
    """What every stage needs: the world, the sizes, a scratch folder, the progress bar."""

    world: World
    sizes: Sizes
    folder: Path
    progress: Progress
    repeat: int = 1
    token: str = ""

    def bodies(self, name: str, count: int, scale: float) -> list[Body]:
        return bodies(self.world, f"{self.sizes.seed}:{name}", count, scale)


def sqlite_stage(run: Run) -> dict[str, Any]:
    """Preload, then the same POSTs over HTTP (one server) and in process, each on a copy."""
    sizes, folder, base = run.sizes, run.folder, run.folder / "base.db"
    label = f"preload {sizes.bookings:,} bookings (in process)"
    with task(run.progress, label, sizes.bookings) as tick:
        loaded = preload(f"sqlite:///{base}", run.world, sizes, tick)
    run.token = loaded.pop("token")
    warm = run.bodies("warm", WARM_UP_POSTS, LATENCY_SCALE)
    posts = run.bodies("latency", sizes.latency_posts, LATENCY_SCALE)
    url = copy_sqlite(base, folder / "http.db")
    with (
        serving(url, run.world, folder, 1) as servers,
        task(run.progress, "SQLite: POST, 1 client, 1 server", len(posts)) as tick,
    ):
        http = single_client(servers[0], run.token, warm, posts, tick)
    with task(run.progress, "SQLite: ReservationService.reserve", len(posts)) as tick:
        inproc = in_process(copy_sqlite(base, folder / "inproc.db"), warm, posts, tick)
    return {
        "preload": loaded,
        "http": {**figures(http), "check": check(url, run.world)},
        "in_process": figures(inproc),
    }


def check(url: str, world: World) -> dict[str, Any]:
    booked, problems = overbooking(url, world.topology)
    return {"booked": booked, "overbooked": len(problems), "problems": problems[:10]}


def postgres_stage(run: Run) -> dict[str, Any]:
    """The SQLite store copied to PostgreSQL; clients on 2 replicas, then on 1; in process."""
    url, source = postgres_url()
    if url is None:
        return {"skipped": f"PostgreSQL not available: {source}"}
    pg = Postgres(url)
    try:
        with task(run.progress, "copy the store to PostgreSQL", 1) as tick:
            copy_rows(f"sqlite:///{run.folder / 'base.db'}", pg.create("base"))
            tick(1)
        out: dict[str, Any] = {"source": source}
        # Runs alternate between 2 replicas and 1, so a drift in what the rest
        # of the machine takes touches both alike; each starts from a fresh copy.
        runs: dict[int, list[dict[str, Any]]] = {2: [], 1: []}
        for attempt in range(run.repeat):
            for replicas in (2, 1):
                database = pg.create(f"r{replicas}_{attempt}", template="base")
                probe = replicas == 2 and attempt == 0
                runs[replicas].append(throughput(run, database, replicas, probe=probe))
        for replicas, done in runs.items():
            out[f"replicas_{replicas}"] = median_run(done)
            out[f"runs_{replicas}"] = done
        if "client_capacity" in runs[2][0]:  # probed after the first run only
            out["replicas_2"]["client_capacity"] = runs[2][0]["client_capacity"]
        warm = run.bodies("warm", WARM_UP_POSTS, LATENCY_SCALE)
        posts = run.bodies("latency", run.sizes.latency_posts, LATENCY_SCALE)
        with task(run.progress, "PostgreSQL: ReservationService.reserve", len(posts)) as tick:
            out["in_process"] = figures(
                in_process(pg.create("inproc", template="base"), warm, posts, tick)
            )
        return out
    finally:
        pg.drop_all()


def compare_stage(run: Run, revision: str) -> dict[str, Any]:
    """2 replicas on PostgreSQL: this checkout's runs alternating with those of `revision`.

    Each side preloads its own store (`service_baseline`); the clients, the
    requests and the warm-up are the same, and the order alternates from
    one round to the next.
    """
    url, source = postgres_url()
    if url is None:
        return {"skipped": f"PostgreSQL not available: {source}"}
    sizes, folder = run.sizes, run.folder
    pg = Postgres(url)
    try:
        label = f"preload {sizes.bookings:,} bookings (in process)"
        with task(run.progress, label, sizes.bookings) as tick:
            loaded = preload(f"sqlite:///{folder / 'base.db'}", run.world, sizes, tick)
        run.token = loaded.pop("token")
        copy_rows(f"sqlite:///{folder / 'base.db'}", pg.create("current"))
        (folder / "baseline").mkdir()
        code = baseline_source(revision, folder / "baseline")
        with task(run.progress, f"preload {revision}'s store (its own code)", 1) as tick:
            token = build_store(
                code, run.world, sizes, folder / "baseline.db", pg.create("baseline")
            )
            tick(1)
        sides: dict[str, tuple[str, Path | None]] = {"current": (run.token, None)}
        sides["baseline"] = (token, code)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
        for attempt in range(run.repeat):
            order = list(sides) if attempt % 2 == 0 else list(reversed(sides))
            for name in order:
                database = pg.create(f"{name}_{attempt}", template=name)
                side_token, code_of = sides[name]
                runs[name].append(
                    throughput(run, database, 2, probe=False, token=side_token, source=code_of)
                )
        out: dict[str, Any] = {"source": source, "revision": revision, "preload": loaded}
        for name, every in runs.items():
            out[name] = median_run(every)
            out[f"runs_{name}"] = every
        return out
    finally:
        pg.drop_all()


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median admissions/s (the lower middle one of an even count)."""
    ranked = sorted(runs, key=lambda r: r["admissions_per_s"])
    chosen = dict(ranked[(len(ranked) - 1) // 2])
    chosen["all_admissions_per_s"] = [round(r["admissions_per_s"], 1) for r in runs]
    # Overbooking in any run counts, not only in the one whose rate is shown.
    chosen["check"] = {
        **chosen["check"],
        "overbooked": sum(r["check"]["overbooked"] for r in runs),
        "problems": [p for r in runs for p in r["check"]["problems"]][:10],
    }
    return chosen


def throughput(
    run: Run,
    database: str,
    replicas: int,
    *,
    probe: bool,
    token: str | None = None,
    source: Path | None = None,
) -> dict[str, Any]:
    """`clients` threads over the replicas of one store, then the overbooking check.

    With `probe`, the same client threads then GET /healthz on the same
    replicas: the requests/s they reach there bounds what the clients could
    drive at all. `token` and `source`: another revision's store and code
    (`--baseline`).
    """
    token = token or run.token
    sizes = run.sizes
    work = [
        run.bodies(f"client{n}", sizes.posts_per_client, THROUGHPUT_SCALE)
        for n in range(sizes.clients)
    ]
    warm = run.bodies("warm", WARM_UP_POSTS, THROUGHPUT_SCALE)
    which = "" if source is None else " (baseline)"
    label = f"PostgreSQL: {sizes.clients} clients, {replicas} replica(s){which}"
    with serving(database, run.world, run.folder, replicas, source) as servers:
        urls = [s.url for s in servers]
        for n, server_url in enumerate(urls):  # the same warm-up, spread over the replicas
            post_all(server_url, token, warm[n :: len(urls)], lambda _: None)
        with task(run.progress, label, sizes.clients * sizes.posts_per_client) as tick:
            answers = many_clients(servers, token, work, tick)
        probed = client_capacity(servers, token, sizes.clients, PROBE_REQUESTS) if probe else None
    out = {**figures(answers), "replicas": replicas, "check": check(database, run.world)}
    if probed is not None:
        capacity = figures(probed)
        out["client_capacity"] = {
            "requests_per_s": round(capacity["decisions_per_s"]),
            "p50_ms": capacity["p50_ms"],
            "cpu_ms_per_request": capacity["cpu_ms_per_post"],
        }
    return out


def run_all(
    sizes: Sizes, console: Console, folder: Path, repeat: int
) -> tuple[dict[str, Any], World]:
    world = make_world(sizes.bookings, sizes.seed)
    with progress_bar(console, width=44) as progress:
        run = Run(world, sizes, folder, progress, repeat)
        sqlite = sqlite_stage(run)
        console.print(f"SQLite stage done; POST p50 {ms(sqlite['http']['p50_ms'])}")
        pg = postgres_stage(run)
    return {"sqlite": sqlite, "postgres": pg}, world


def measured(work: Callable[[Console, Path], T]) -> tuple[T, Console, dict[str, Any], float]:
    """`work(console, folder)` in a scratch folder, with the machine's figures around it.

    Returns what it returned, the console, the machine (Python, CPUs, load
    before and after, fsync) and the seconds it took. On failure the folder,
    with the servers' logs, is kept and named.
    """
    console = Console()
    if not console.is_terminal:
        console.width = 160
    folder = Path(tempfile.mkdtemp(prefix="braid-service-bench-"))
    began = time.perf_counter()
    machine: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    machine.update(load_before=os.getloadavg(), fsync_p50_ms=fsync_probe_ms(folder))
    try:
        out = work(console, folder)
    except Exception:
        console.print(f"[bold red]failed[/]; server logs kept in {folder}")
        raise
    machine["load_after"] = os.getloadavg()
    shutil.rmtree(folder, ignore_errors=True)
    return out, console, machine, time.perf_counter() - began


def report(
    console: Console,
    title: str,
    rows: list[TableRow],
    machine: dict[str, Any],
    problems: list[str],
) -> int:
    """The table, then every problem; the exit status (1 if any)."""
    print_table(console, rows, title, machine_line(machine))
    for problem in problems:
        console.print(f"[bold red]WRONG[/] {problem}")
    return 1 if problems else 0


def compare(sizes: Sizes, args: argparse.Namespace) -> int:
    """`--baseline`: the 2-replica PostgreSQL runs of this checkout and of another revision."""
    world = make_world(sizes.bookings, sizes.seed)

    def work(console: Console, folder: Path) -> dict[str, Any]:
        with progress_bar(console, width=44) as progress:
            run = Run(world, sizes, folder, progress, args.repeat)
            return compare_stage(run, args.baseline)

    result, console, machine, elapsed = measured(work)
    title = f"braid service benchmark against {args.baseline} ({elapsed:.0f} s)"
    status = report(console, title, comparison_rows(result), machine, compare_failures(result))
    if args.json:
        settings = {**sizes.__dict__, "topology": TOPOLOGY, "quick": args.quick}
        settings.update(repeat=args.repeat, baseline=args.baseline)
        document = {"settings": settings, "machine": machine, "elapsed_s": round(elapsed, 1)}
        write_json(args.json, {**document, "postgres": result})
    return status


def main(argv: list[str] | None = None) -> int:
    sizes, args = parse_args(argv)
    if args.baseline:
        return compare(sizes, args)
    (results, world), console, machine, elapsed = measured(
        lambda console, folder: run_all(sizes, console, folder, args.repeat)
    )
    rows = sqlite_rows(results["sqlite"], world) + postgres_rows(results["postgres"])
    title = f"braid service benchmark ({elapsed:.0f} s)"
    status = report(console, title, rows, machine, failures(results["sqlite"], results["postgres"]))
    if args.json:
        settings = {**sizes.__dict__, "topology": TOPOLOGY, "quick": args.quick}
        settings["repeat"] = args.repeat
        table = [{"metric": m, "value": v, "floor": f, "met": ok} for m, v, f, ok in rows]
        document = {"settings": settings, "machine": machine, "elapsed_s": round(elapsed, 1)}
        write_json(args.json, {**document, "table": table, **results})
    return status


if __name__ == "__main__":
    sys.exit(main())
