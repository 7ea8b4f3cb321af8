"""braid service benchmark: `POST /v1/reservations` through real `braid serve` processes.

Run from the repository root:

    .venv/bin/python bench/service_bench.py [--quick] [--json out.json]

On the Topology Zoo's Esnet (--default-capacity 100G) with 10,000 bookings in
the store, it measures the POST latency against one server on SQLite (single
client), the admission rate of 8 clients against two replicas on PostgreSQL
(then checks the store for overbooking), and, for ratios, the same POSTs
against one PostgreSQL replica and the same requests through
`ReservationService.reserve` in process (no HTTP). See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from sqlalchemy import Engine, create_engine, delete, event, insert, select, text
from sqlalchemy.engine import make_url

from braid.adapters.store import open_repository
from braid.adapters.store.schema import Base
from braid.app.auth import create_token
from braid.app.errors import RejectedError
from braid.app.ports import ConflictError
from braid.app.records import User
from braid.app.service import ReservationService
from braid.app.timefmt import format_instant
from braid.cli.serve_cmd import initial_topology
from braid.core.loads import capacity_lookup, peak_problems
from braid.core.schedule import fixed_path
from braid.core.topology import Topology, topology_from_dict
from core_bench import progress_bar, task
from workload import MAX_DURATION, MIN_DURATION, WEEK, SizeModel, log_uniform, shared_data_dir
from workload import size_model as fit_sizes

REPO = Path(__file__).resolve().parents[1]
TOPOLOGY = "Esnet"
DEFAULT_CAPACITY = "100G"
FLOOR_SQLITE_P50_MS = 10.0
FLOOR_ADMISSIONS_PER_S = 200.0
# Sizes relative to the preloaded bookings: the latency run asks for twice as
# much (so a fair share is refused and both answers are timed), the throughput
# run for the same (most fit, as in a busy but working network).
LATENCY_SCALE, THROUGHPUT_SCALE = 2.0, 1.0
WARM_UP_POSTS = 20
START_TIMEOUT_S = 180.0

Tick = Callable[[int], None]
Body = dict[str, Any]


@dataclass(frozen=True)
class Sizes:
    """How much to do; --quick shrinks the measured runs, never the 10,000 bookings."""

    bookings: int
    latency_posts: int
    clients: int
    posts_per_client: int
    seed: int


@dataclass(frozen=True)
class World:
    graphml: Path
    data: dict[str, Any]  # the topology as `braid serve --topology` stores it
    topology: Topology
    sizes: SizeModel
    nodes: tuple[str, ...]
    t0: int  # start of the booked week: tomorrow, on the hour (the servers run on the clock)


@dataclass
class Answers:
    """(status, seconds) of each POST, and the wall time of the whole run."""

    results: list[tuple[int, float]] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_ms_per_post: dict[str, float] = field(default_factory=dict)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path


def parse_args(argv: list[str] | None) -> tuple[Sizes, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer POSTs (under 2 minutes)")
    parser.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--bookings", type=int, default=10_000, help="bookings in the store")
    args = parser.parse_args(argv)
    if args.quick:
        sizes = Sizes(args.bookings, 200, 8, 60, args.seed)
    else:
        sizes = Sizes(args.bookings, 1000, 8, 250, args.seed)
    return sizes, args


# -- the world and its requests ------------------------------------------------------


def make_world(bookings: int, seed: int) -> World:
    graphml = shared_data_dir() / f"{TOPOLOGY}.graphml"
    data = initial_topology(graphml, DEFAULT_CAPACITY)
    topology = topology_from_dict(data)
    sizes = fit_sizes(topology, bookings, random.Random(f"{seed}:sizes"))
    t0 = (int(time.time()) // 3600 + 24) * 3600
    return World(graphml, data, topology, sizes, tuple(sorted(topology.nodes)), t0)


@dataclass(frozen=True)
class Ask:
    """One fixed-window request, in braid's units (bit/s, epoch seconds)."""

    src: str
    dst: str
    bps: int
    start: int
    end: int

    def body(self) -> Body:
        return {
            "src": self.src,
            "dst": self.dst,
            "bandwidth": self.bps // 1_000_000,
            "start": format_instant(self.start),
            "end": format_instant(self.end),
        }


def random_ask(world: World, rng: random.Random, scale: float) -> Ask:
    """A request in the booked week, drawn like the bookings in place."""
    src, dst = rng.sample(world.nodes, 2)
    duration = int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
    start = world.t0 + rng.randrange(WEEK - duration)
    bps = world.sizes.draw(rng, scale) // 1_000_000 * 1_000_000
    return Ask(src, dst, bps, start, start + duration)


def bodies(world: World, seed: str, count: int, scale: float) -> list[Body]:
    rng = random.Random(seed)
    return [random_ask(world, rng, scale).body() for _ in range(count)]


# -- stores ----------------------------------------------------------------------------


def preload(url: str, world: World, sizes: Sizes, tick: Tick) -> dict[str, Any]:
    """Book `sizes.bookings` reservations through `ReservationService.reserve`, in process.

    Requests that the mirror shows cannot fit are skipped before asking the
    service: a refusal makes the planner look for alternatives, which is slow
    and books nothing. A token for the measured runs is stored too.
    """
    repo = open_repository(url)
    if repo.engine.dialect.name == "sqlite":
        # Only this loader skips fsync (a throwaway file); servers open it with defaults.
        event.listen(repo.engine, "connect", lambda dbapi, _: dbapi.execute("PRAGMA synchronous=0"))
        repo.engine.dispose()
    service = ReservationService(repo)
    service.start(world.data)
    rng, user = random.Random(f"{sizes.seed}:preload"), User("preload", "user")
    placed = tried = 0
    began = time.perf_counter()
    while placed < sizes.bookings and tried < 3 * sizes.bookings:
        tried += 1
        ask = random_ask(world, rng, 1.0)
        if not fixed_path(service.live.network, ask.src, ask.dst, ask.bps, ask.start, ask.end):
            continue
        try:
            service.reserve(user, ask.body())
        except RejectedError:  # the mirror may lag the store (say, a service that skips
            continue  # catching up after its own writes): the service has the last word
        placed += 1
        tick(1)
    seconds = time.perf_counter() - began
    token = create_token(repo, "bench", "user", int(time.time()))
    repo.close()
    return {"placed": placed, "tried": tried, "seconds": round(seconds, 1), "token": token}


def copy_sqlite(source: Path, target: Path) -> str:
    """A copy of a closed SQLite store (closing its last connection checkpointed the WAL)."""
    shutil.copyfile(source, target)
    return f"sqlite:///{target}"


def copy_rows(source_url: str, target_url: str) -> None:
    """Every row of every braid table, verbatim, into a freshly migrated store."""
    source, target = open_repository(source_url), open_repository(target_url)
    tables = Base.metadata.sorted_tables
    try:
        with target.engine.begin() as out, source.engine.connect() as read:
            for table in reversed(tables):
                out.execute(delete(table))
            for table in tables:
                rows = [dict(row._mapping) for row in read.execute(select(table))]
                for offset in range(0, len(rows), 5000):
                    out.execute(insert(table), rows[offset : offset + 5000])
            reset_sequences(out, tables)
    finally:
        source.close()
        target.close()


def reset_sequences(connection: Any, tables: list[Any]) -> None:
    """Serial keys continue after the copied ids (PostgreSQL)."""
    for table in tables:
        keys = list(table.primary_key.columns)
        if len(keys) != 1:
            continue
        name, column = table.name, keys[0].name
        found = text("SELECT pg_get_serial_sequence(:t, :c)")
        sequence = connection.execute(found, {"t": name, "c": column}).scalar()
        if sequence:
            top = f'SELECT COALESCE(MAX("{column}"), 0) + 1 FROM "{name}"'
            after = connection.execute(text(top)).scalar()
            connection.execute(text("SELECT setval(:s, :v, false)"), {"s": sequence, "v": after})


def overbooking(url: str, topology: Topology) -> tuple[int, list[str]]:
    """Recompute every link direction's usage from the store's loads of booked reservations."""
    repo = open_repository(url)
    try:
        booked = {r.id for r in repo.booked()}
        live = [load for rid, load in repo.link_loads() if rid in booked]
    finally:
        repo.close()
    return len(booked), peak_problems(live, capacity_lookup(topology))


class Postgres:
    """Databases of this run on the test server; a template copy per experiment."""

    def __init__(self, base_url: str) -> None:
        self.base = make_url(base_url)
        self.prefix = f"braid_bench_{secrets.token_hex(3)}"
        self.admin: Engine = create_engine(self.base, isolation_level="AUTOCOMMIT")
        self.made: list[str] = []

    def create(self, suffix: str, template: str | None = None) -> str:
        name = f"{self.prefix}_{suffix}"
        like = f' TEMPLATE "{self.prefix}_{template}"' if template else ""
        with self.admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"{like}'))
        self.made.append(name)
        return self.base.set(database=name).render_as_string(hide_password=False)

    def drop_all(self) -> None:
        with self.admin.connect() as connection:
            for name in reversed(self.made):
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.admin.dispose()


def postgres_url() -> tuple[str | None, str]:
    """BRAID_TEST_POSTGRES_URL, else what scripts/pg-test-server starts; or why not."""
    given = os.environ.get("BRAID_TEST_POSTGRES_URL")
    if given:
        return given, "BRAID_TEST_POSTGRES_URL"
    script = REPO / "scripts" / "pg-test-server"
    done = subprocess.run([str(script)], capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        return None, done.stderr.strip() or "scripts/pg-test-server failed"
    return done.stdout.strip(), "scripts/pg-test-server"


# -- servers -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def launch(database: str, world: World, log: Path) -> Server:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}
    command = [sys.executable, "-m", "braid.cli.main", "serve", "--database", database,
               "--topology", str(world.graphml), "--default-capacity", DEFAULT_CAPACITY,
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    return Server(process, f"http://127.0.0.1:{port}", log)


def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"braid serve exited:\n{server.log.read_text()[-3000:]}")
        try:
            if httpx.get(server.url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"braid serve did not answer in {START_TIMEOUT_S} s: {server.log}")


@contextmanager
def serving(database: str, world: World, folder: Path, count: int) -> Iterator[list[Server]]:
    """`count` replicas on one database (started one after the other), stopped afterwards."""
    servers: list[Server] = []
    try:
        for _ in range(count):
            log = folder / f"serve-{len(list(folder.glob('serve-*.log')))}.log"
            servers.append(launch(database, world, log))
            wait_ready(servers[-1])
        yield servers
    finally:
        for server in servers:
            server.process.terminate()
        for server in servers:
            try:
                server.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.process.kill()
                server.process.wait()


# -- CPU accounting (Linux /proc; empty elsewhere) ---------------------------------------


def _proc_cpu_s(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds of one process (0 if gone); `reaped` adds its exited children's."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def _named(name: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot (every process on the machine)."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_snapshot(server_pids: list[int]) -> dict[str, float]:
    if not Path("/proc/stat").exists():
        return {}
    return {
        "servers": sum(_proc_cpu_s(pid) for pid in server_pids),
        # Backends that exit (pool overflow) leave their CPU to the postmaster's children.
        "postgres": sum(_proc_cpu_s(pid, reaped=True) for pid in _named("postgres")),
        "clients": time.process_time(),
        "machine": _machine_busy_s(),
    }


def cpu_per_post_ms(
    before: dict[str, float], after: dict[str, float], posts: int
) -> dict[str, float]:
    """CPU ms per POST by who spent it; `others` is the rest of the machine (not braid)."""
    if not before or not posts:
        return {}
    out = {k: (after[k] - before[k]) * 1e3 / posts for k in before}
    out["others"] = out.pop("machine") - out["servers"] - out["postgres"] - out["clients"]
    return out


# -- clients --------------------------------------------------------------------------------


def post_all(url: str, token: str, posts: list[Body], tick: Tick) -> list[tuple[int, float]]:
    """POST each body in turn on one keep-alive connection; (status, seconds) each."""
    out = []
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as http:
        for body in posts:
            began = time.perf_counter()
            status = http.post("/v1/reservations", json=body).status_code
            out.append((status, time.perf_counter() - began))
            tick(1)
    return out


def single_client(
    server: Server, token: str, warm: list[Body], posts: list[Body], tick: Tick
) -> Answers:
    post_all(server.url, token, warm, lambda _: None)
    before, began = cpu_snapshot([server.process.pid]), time.perf_counter()
    results = post_all(server.url, token, posts, tick)
    wall = time.perf_counter() - began
    cpu = cpu_per_post_ms(before, cpu_snapshot([server.process.pid]), len(results))
    return Answers(results, wall, cpu)


def many_clients(servers: list[Server], token: str, work: list[list[Body]], tick: Tick) -> Answers:
    """One thread per body list, on the replicas in turn, all let go at once."""
    urls, pids = [s.url for s in servers], [s.process.pid for s in servers]
    go = threading.Barrier(len(work) + 1)
    lock = threading.Lock()

    def tick_safely(n: int) -> None:
        with lock:
            tick(n)

    def client(n: int) -> list[tuple[int, float]]:
        go.wait()
        return post_all(urls[n % len(urls)], token, work[n], tick_safely)

    with ThreadPoolExecutor(len(work)) as pool:
        futures = [pool.submit(client, n) for n in range(len(work))]
        before = cpu_snapshot(pids)
        go.wait()
        began = time.perf_counter()
        results = [r for f in futures for r in f.result()]
    wall = time.perf_counter() - began
    return Answers(results, wall, cpu_per_post_ms(before, cpu_snapshot(pids), len(results)))


def in_process(url: str, warm: list[Body], posts: list[Body], tick: Tick) -> Answers:
    """The same requests through `ReservationService.reserve`: no HTTP, no JSON."""
    repo = open_repository(url)
    service = ReservationService(repo)
    service.start()
    user = User("bench", "user")
    answers = Answers()
    try:
        for n, body in enumerate([*warm, *posts]):
            began = time.perf_counter()
            try:
                service.reserve(user, body)
                status = 201
            except (RejectedError, ConflictError):
                status = 409
            if n >= len(warm):
                answers.results.append((status, time.perf_counter() - began))
                tick(1)
    finally:
        repo.close()
    answers.wall_s = sum(s for _, s in answers.results)
    return answers


# -- figures ---------------------------------------------------------------------------------


def percentile_ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if q == 0.5:
        return statistics.median(values) * 1e3
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1e3


def figures(answers: Answers) -> dict[str, Any]:
    """Counts by outcome, latency percentiles, and rates over the run's wall time."""
    every = [s for _, s in answers.results]
    admitted = [s for status, s in answers.results if status == 201]
    rejected = [s for status, s in answers.results if status == 409]
    wall = answers.wall_s or 1e-9
    return {
        "posts": len(every),
        "admitted": len(admitted),
        "rejected": len(rejected),
        "other": len(every) - len(admitted) - len(rejected),
        "other_statuses": sorted({st for st, _ in answers.results if st not in (201, 409)}),
        "p50_ms": percentile_ms(every, 0.5),
        "p99_ms": percentile_ms(every, 0.99),
        "admitted_p50_ms": percentile_ms(admitted, 0.5),
        "rejected_p50_ms": percentile_ms(rejected, 0.5),
        "wall_s": round(answers.wall_s, 2),
        "decisions_per_s": len(every) / wall,
        "admissions_per_s": len(admitted) / wall,
        "cpu_ms_per_post": {k: round(v, 2) for k, v in answers.cpu_ms_per_post.items()},
    }


# -- the stages ------------------------------------------------------------------------------


@dataclass
class Run:
    """What every stage needs: the world, the sizes, a scratch folder, the progress bar."""

    world: World
    sizes: Sizes
    folder: Path
    progress: Progress
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
        for replicas in (2, 1):
            database = pg.create(f"r{replicas}", template="base")
            out[f"replicas_{replicas}"] = throughput(run, database, replicas)
        warm = run.bodies("warm", WARM_UP_POSTS, LATENCY_SCALE)
        posts = run.bodies("latency", run.sizes.latency_posts, LATENCY_SCALE)
        with task(run.progress, "PostgreSQL: ReservationService.reserve", len(posts)) as tick:
            out["in_process"] = figures(
                in_process(pg.create("inproc", template="base"), warm, posts, tick)
            )
        return out
    finally:
        pg.drop_all()


def throughput(run: Run, database: str, replicas: int) -> dict[str, Any]:
    """`clients` threads over the replicas of one store, then the overbooking check."""
    sizes = run.sizes
    work = [
        run.bodies(f"client{n}", sizes.posts_per_client, THROUGHPUT_SCALE)
        for n in range(sizes.clients)
    ]
    warm = run.bodies("warm", WARM_UP_POSTS, THROUGHPUT_SCALE)
    label = f"PostgreSQL: {sizes.clients} clients, {replicas} replica(s)"
    with serving(database, run.world, run.folder, replicas) as servers:
        urls = [s.url for s in servers]
        for n, server_url in enumerate(urls):  # the same warm-up, spread over the replicas
            post_all(server_url, run.token, warm[n :: len(urls)], lambda _: None)
        with task(run.progress, label, sizes.clients * sizes.posts_per_client) as tick:
            answers = many_clients(servers, run.token, work, tick)
    return {**figures(answers), "replicas": replicas, "check": check(database, run.world)}


# -- the table ---------------------------------------------------------------------------------

TableRow = tuple[str, str, str, bool | None]


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} ms"


def latency_rows(name: str, f: dict[str, Any]) -> list[TableRow]:
    return [
        (f"  {name}: p50 / p99", f"{ms(f['p50_ms'])} / {ms(f['p99_ms'])}", "", None),
        (f"  {name}: admitted / rejected / other", _outcomes(f), "", None),
        (
            f"  {name}: p50 admitted / rejected",
            f"{ms(f['admitted_p50_ms'])} / {ms(f['rejected_p50_ms'])}",
            "",
            None,
        ),
        *_cpu_row(name, f["cpu_ms_per_post"]),
    ]


def _cpu_row(name: str, cpu: dict[str, float]) -> list[TableRow]:
    """CPU ms per POST by process: where the machine's time went (others: not braid's)."""
    if not cpu:
        return []
    parts = " / ".join(f"{cpu[k]:.1f}" for k in ("servers", "postgres", "clients", "others"))
    return [(f"  {name}: CPU ms per POST: server / PG / client / others", parts, "", None)]


def _outcomes(f: dict[str, Any]) -> str:
    other = f"{f['other']} {f['other_statuses']}" if f["other"] else "0"
    return f"{f['admitted']} / {f['rejected']} / {other}"


def sqlite_rows(result: dict[str, Any], world: World) -> list[TableRow]:
    loaded, http, inproc = result["preload"], result["http"], result["in_process"]
    where = f"{TOPOLOGY}: {len(world.topology.nodes)} nodes, {len(world.topology.links)} links"
    p50, base = http["p50_ms"], inproc["p50_ms"]
    overhead = f"+{p50 - base:.2f} ms (×{p50 / base:.2f})" if p50 and base else "—"
    return [
        (
            f"bookings in place ({where})",
            f"{loaded['placed']:,} of {loaded['tried']:,} tried, {loaded['seconds']} s",
            "≥ 10,000",
            loaded["placed"] >= 10_000,
        ),
        (
            "SQLite: POST p50, 1 client, 1 server",
            ms(p50),
            f"≤ {FLOOR_SQLITE_P50_MS:g} ms",
            p50 is not None and p50 <= FLOOR_SQLITE_P50_MS,
        ),
        *latency_rows("HTTP", http),
        ("SQLite: ReservationService.reserve p50 (no HTTP)", ms(base), "", None),
        *latency_rows("in process", inproc),
        ("HTTP overhead on the p50", overhead, "", None),
        _check_row("SQLite: overbooking in the store afterwards", http["check"]),
    ]


def postgres_rows(result: dict[str, Any]) -> list[TableRow]:
    if "skipped" in result:
        return [("PostgreSQL", result["skipped"], "", None)]
    two, one = result["replicas_2"], result["replicas_1"]
    ratio = two["admissions_per_s"] / one["admissions_per_s"] if one["admissions_per_s"] else 0
    rows: list[TableRow] = [
        (
            "PostgreSQL: admissions/s, 8 clients, 2 replicas",
            f"{two['admissions_per_s']:.0f}",
            f"≥ {FLOOR_ADMISSIONS_PER_S:g}",
            two["admissions_per_s"] >= FLOOR_ADMISSIONS_PER_S,
        ),
        ("  decisions/s (201 + 409)", f"{two['decisions_per_s']:.0f}", "", None),
        *latency_rows("2 replicas", two),
        _check_row("PostgreSQL: overbooking after 2 replicas", two["check"]),
        (
            "PostgreSQL: admissions/s, 8 clients, 1 replica",
            f"{one['admissions_per_s']:.0f}",
            "",
            None,
        ),
        ("  decisions/s (201 + 409)", f"{one['decisions_per_s']:.0f}", "", None),
        *latency_rows("1 replica", one),
        _check_row("PostgreSQL: overbooking after 1 replica", one["check"]),
        ("2 replicas / 1 replica (admissions/s)", f"×{ratio:.2f}", "", None),
        (
            "PostgreSQL: ReservationService.reserve p50 (no HTTP, 1 thread)",
            ms(result["in_process"]["p50_ms"]),
            "",
            None,
        ),
    ]
    return rows


def _check_row(label: str, check: dict[str, Any]) -> TableRow:
    value = f"{check['overbooked']} link directions over, {check['booked']:,} booked"
    return (label, value, "0", check["overbooked"] == 0)


def print_table(console: Console, rows: list[TableRow], title: str, caption: str) -> None:
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for name, justify in (("metric", "left"), ("value", "right"), ("floor", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("met?", justify="center")
    for metric, value, floor, met in rows:
        verdict = "" if met is None else ("[green]yes[/]" if met else "[bold red]NO[/]")
        table.add_row(metric, value, floor, verdict)
    console.print(table)


# -- main ----------------------------------------------------------------------------------------


def failures(sqlite: dict[str, Any], pg: dict[str, Any]) -> list[str]:
    """Anything that makes the run wrong rather than slow: overbooking, unexpected statuses."""
    runs = {"SQLite HTTP": sqlite["http"]}
    runs.update({f"PostgreSQL {k}": v for k, v in pg.items() if k.startswith("replicas_")})
    out = []
    for name, figures_ in runs.items():
        if figures_["check"]["overbooked"]:
            out.append(f"{name}: overbooking {figures_['check']['problems']}")
        if figures_["other"]:
            out.append(f"{name}: statuses other than 201/409: {figures_['other_statuses']}")
    return out


def run_all(sizes: Sizes, console: Console, folder: Path) -> tuple[dict[str, Any], World]:
    world = make_world(sizes.bookings, sizes.seed)
    with progress_bar(console, width=44) as progress:
        run = Run(world, sizes, folder, progress)
        sqlite = sqlite_stage(run)
        console.print(f"SQLite stage done; POST p50 {ms(sqlite['http']['p50_ms'])}")
        pg = postgres_stage(run)
    return {"sqlite": sqlite, "postgres": pg}, world


def fsync_probe_ms(folder: Path, count: int = 50) -> float | None:
    """Median time of fsync after a 4 KiB write here: what a durable SQLite commit waits for."""
    times = []
    with (folder / "fsync.probe").open("wb") as out:
        for _ in range(count):
            out.write(b"x" * 4096)
            out.flush()
            began = time.perf_counter()
            os.fsync(out.fileno())
            times.append(time.perf_counter() - began)
    return percentile_ms(times, 0.5)


def machine_line(machine: dict[str, Any]) -> str:
    before, after = machine["load_before"][0], machine["load_after"][0]
    return (
        f"{machine['cpus']} CPUs, Python {machine['python']}; load average {before:.1f} at the "
        f"start, {after:.1f} at the end (other processes share the CPUs: see 'others'); "
        f"fsync p50 {ms(machine['fsync_p50_ms'])}"
    )


def write_json(path: str, document: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(document, indent=2))


def main(argv: list[str] | None = None) -> int:
    sizes, args = parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console.width = 160
    folder = Path(tempfile.mkdtemp(prefix="braid-service-bench-"))
    began = time.perf_counter()
    machine: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    machine.update(load_before=os.getloadavg(), fsync_p50_ms=fsync_probe_ms(folder))
    try:
        results, world = run_all(sizes, console, folder)
    except Exception:
        console.print(f"[bold red]failed[/]; server logs kept in {folder}")
        raise
    machine["load_after"] = os.getloadavg()
    shutil.rmtree(folder, ignore_errors=True)
    elapsed = time.perf_counter() - began
    rows = sqlite_rows(results["sqlite"], world) + postgres_rows(results["postgres"])
    title = f"braid service benchmark ({elapsed:.0f} s)"
    print_table(console, rows, title, machine_line(machine))
    problems = failures(results["sqlite"], results["postgres"])
    for problem in problems:
        console.print(f"[bold red]WRONG[/] {problem}")
    if args.json:
        settings = {**sizes.__dict__, "topology": TOPOLOGY, "quick": args.quick}
        table = [{"metric": m, "value": v, "floor": f, "met": ok} for m, v, f, ok in rows]
        document = {"settings": settings, "machine": machine, "elapsed_s": round(elapsed, 1)}
        write_json(args.json, {**document, "table": table, **results})
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
