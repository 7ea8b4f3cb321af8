"""The service benchmark's world and stores: Esnet, its requests, the preloaded bookings.

`make_world` loads the topology as `braid serve --topology` would; `preload`
books the 10,000 reservations in process; the copies give every measured
run the same store (a file copy for SQLite, `CREATE DATABASE ... TEMPLATE`
for PostgreSQL); `overbooking` recomputes every link's usage afterwards.
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, delete, event, insert, select, text
from sqlalchemy.engine import make_url

from braid.adapters.store import open_repository
from braid.adapters.store.schema import Base
from braid.app.auth import create_token
from braid.app.errors import RejectedError
from braid.app.records import User

try:
    from braid.app.reservations.commands import Reserve
    from braid.app.reservations.service import ReservationService
except ModuleNotFoundError:  # --baseline: a revision from before app/reservations/
    from braid.app.commands import Reserve  # type: ignore[import-not-found,no-redef]
    from braid.app.service import ReservationService  # type: ignore[import-not-found,no-redef]
from braid.bootstrap.serve import initial_topology
from braid.core.model.instants import format_instant
from braid.core.model.loads import capacity_lookup, peak_problems
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.schedule import fixed_path
from workload import MAX_DURATION, MIN_DURATION, WEEK, SizeModel, log_uniform, shared_data_dir
from workload import size_model as fit_sizes

REPO = Path(__file__).resolve().parents[1]
TOPOLOGY = "Esnet"
DEFAULT_CAPACITY = "100G"

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
        if not fixed_path(network_of(service), ask.src, ask.dst, ask.bps, ask.start, ask.end):
            continue
        try:
            service.reserve(user, Reserve.parse(ask.body()))
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


def network_of(service: ReservationService) -> Any:
    """The service's in-memory network, in this revision's layout or a --baseline one's."""
    books = getattr(service, "books", None)
    mirror = books.mirror if books is not None else getattr(service, "live")  # noqa: B009
    return mirror.network
