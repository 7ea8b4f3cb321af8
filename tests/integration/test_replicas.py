"""Two `braid serve` replicas on one database never overbook a link between them.

Each test starts two real server processes on the same store (PostgreSQL, or
one SQLite file in WAL mode), each on its own free port, with a small
topology where every request competes for the same few links: sites A and B
joined by three parallel 10 Mbit/s links and a longer two-hop detour through
M. Client threads split across the replicas post fixed-window reservations
with overlapping windows and random sizes, so many must be refused. Then:

- every answer was 201 or 409 in braid's error shape (no 500, no timeout);
- usage recomputed from the store's loads (booked reservations only) never
  exceeds a link direction's capacity, and each booking's stored loads are
  exactly what its paths put on the links;
- the 201s are exactly the store's booked reservations, both replicas list
  that same set, and their mirrors answer availability questions alike
  (they learnt each other's bookings).

A third test checks the checker: overbooking and forged loads forced into a
store past the service must be reported. A fourth, in process, has one
replica's clock a second behind the other's at a hold's expiry: the lagging
replica must keep answering, and its mirror must agree with the store once
its clock catches up.

PostgreSQL needs `BRAID_TEST_POSTGRES_URL` (see tests/integration/store/conftest.py:
skipped locally without it, a failure under CI=true); each run gets a database
of its own, dropped afterwards.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import text

from braid.adapters.free_ports import free_port
from braid.adapters.store import open_repository
from braid.app.errors import RejectedError
from braid.app.ports import Change
from braid.app.records import Reservation, User
from braid.app.reservations import operations
from braid.app.reservations.mirror import as_booking
from braid.app.reservations.service import ReservationService
from braid.core.model.booking import Allocation
from braid.core.model.loads import capacity_lookup, loads_of, peak_problems
from braid.core.model.paths import Path as RoutePath
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.planning.lifecycle import State
from braid.testing.serving import ServeNotReadyError, wait_healthy
from tests.integration.store.workload import unbounded
from tests.unit.app.reservations.rest_shape import rest

TOPOLOGY: dict[str, Any] = {
    "nodes": [{"id": "A"}, {"id": "B"}, {"id": "M"}],
    "links": [
        {"id": "A-B-1", "a": "A", "b": "B", "capacity": "10M", "latency_ms": 5},
        {"id": "A-B-2", "a": "A", "b": "B", "capacity": "10M", "latency_ms": 5},
        {"id": "A-B-3", "a": "A", "b": "B", "capacity": "10M", "latency_ms": 6},
        {"id": "A-M", "a": "A", "b": "M", "capacity": "10M", "latency_ms": 8},
        {"id": "M-B", "a": "M", "b": "B", "capacity": "10M", "latency_ms": 8},
    ],
}
# Tomorrow, on the hour: the servers run on the wall clock, so windows lie ahead of it.
BASE = (int(time.time()) // 3600 + 24) * 3600
SYNC_WAIT_S = 5.0
MBIT = 1_000_000


@dataclass(frozen=True)
class Load:
    """How hard to push: client threads, POSTs per thread, distinct window starts."""

    threads: int
    posts: int
    slots: int


@dataclass
class Replica:
    process: subprocess.Popen[bytes]
    url: str
    log: Path


@dataclass
class Outcome:
    statuses: Counter[int] = field(default_factory=Counter)
    created: set[str] = field(default_factory=set)
    bad: list[str] = field(default_factory=list)


# -- servers -----------------------------------------------------------------------


def clean_env() -> dict[str, str]:
    """The environment without the BRAID_* settings of the machine running the tests."""
    return {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}


def braid(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "braid.cli.main", *args],
        capture_output=True, text=True, timeout=60, check=False, env=clean_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def launch(database: str, topology: Path, log: Path) -> Replica:
    port = free_port()
    command = [sys.executable, "-m", "braid.cli.main", "serve", "--database", database,
               "--topology", str(topology), "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=clean_env())
    return Replica(process, f"http://127.0.0.1:{port}", log)


def wait_ready(replica: Replica) -> None:
    try:
        wait_healthy(replica.url, replica.process)
    except ServeNotReadyError as exc:
        pytest.fail(f"{exc}:\n{replica.log.read_text()}")


def stop(replicas: list[Replica]) -> None:
    for replica in replicas:
        if replica.process.poll() is None:
            replica.process.terminate()
    for replica in replicas:
        try:
            replica.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            replica.process.kill()
            replica.process.wait(timeout=10)


@contextmanager
def two_replicas(database: str, tmp_path: Path) -> Iterator[tuple[list[Replica], str, str]]:
    """Two servers on `database`, a user token and an operator token.

    The servers start one after the other (simultaneous first starts have
    their own test). The tokens are made (their commands migrate the same
    database) while the first server starts.
    """
    topology = tmp_path / "contended.yaml"
    topology.write_text(yaml.safe_dump(TOPOLOGY))
    replicas: list[Replica] = []
    try:
        replicas.append(launch(database, topology, tmp_path / "replica-0.log"))
        with ThreadPoolExecutor(2) as pool:
            user = pool.submit(braid, "token", "create", "--user", "alice", "--database", database)
            operator = pool.submit(braid, "token", "create", "--user", "ops",
                                   "--role", "operator", "--database", database)  # fmt: skip
            wait_ready(replicas[0])
            replicas.append(launch(database, topology, tmp_path / "replica-1.log"))
            tokens = user.result(), operator.result()
        wait_ready(replicas[1])
        yield replicas, *tokens
    finally:
        stop(replicas)


# -- clients -----------------------------------------------------------------------


def iso(instant: int) -> str:
    return datetime.fromtimestamp(instant, UTC).isoformat().replace("+00:00", "Z")


def random_body(rng: random.Random, slots: int) -> dict[str, Any]:
    """A fixed window on one of a few overlapping starts, 1-6 Mbit/s, sometimes split."""
    src, dst = rng.sample(["A", "B"], 2)
    start = BASE + rng.randrange(slots) * 900
    return {
        "src": src,
        "dst": dst,
        "bandwidth": rng.randint(1, 6),
        "start": iso(start),
        "end": iso(start + rng.choice((900, 1800, 3600))),
        "max_paths": rng.choice((1, 1, 2)),
    }


def judge(response: httpx.Response, outcome: Outcome) -> None:
    outcome.statuses[response.status_code] += 1
    if response.status_code == 201:
        outcome.created.add(response.json()["id"])
        return
    error = response.json().get("error", {}) if response.status_code == 409 else {}
    if error.get("code") not in ("rejected", "conflict") or not error.get("message"):
        outcome.bad.append(f"{response.status_code}: {response.text[:300]}")


def client(url: str, token: str, load: Load, seed: int, go: threading.Barrier) -> Outcome:
    rng = random.Random(seed)
    outcome = Outcome()
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        go.wait()
        for _ in range(load.posts):
            try:
                judge(http.post("/v1/reservations", json=random_body(rng, load.slots)), outcome)
            except (httpx.HTTPError, ValueError) as exc:  # no answer, or not JSON
                outcome.bad.append(f"{type(exc).__name__}: {exc}")
    return outcome


def run_clients(replicas: list[Replica], token: str, load: Load) -> Outcome:
    """`load.threads` clients, alternating between the replicas, started together."""
    go = threading.Barrier(load.threads)
    with ThreadPoolExecutor(load.threads) as pool:
        futures = [
            pool.submit(client, replicas[n % len(replicas)].url, token, load, n, go)
            for n in range(load.threads)
        ]
        outcomes = [f.result(timeout=120) for f in futures]
    total = Outcome()
    for outcome in outcomes:
        total.statuses.update(outcome.statuses)
        total.created |= outcome.created
        total.bad += outcome.bad
    return total


# -- checks ------------------------------------------------------------------------


def store_check(database: str, topology: Topology) -> tuple[set[str], list[str]]:
    """The booked ids, and every overbooking or load/path mismatch found in the store."""
    repo = open_repository(database)
    try:
        booked = {r.id: r for r in repo.booked()}
        stored = repo.link_loads()
        with repo.engine.connect() as connection:
            rows = connection.execute(text("SELECT id, longest_load FROM links")).all()
            longest: dict[str, int] = {str(link): int(value) for link, value in rows}
    finally:
        repo.close()
    live = [load for rid, load in stored if rid in booked]
    problems = peak_problems(live, capacity_lookup(topology))
    problems += unbounded((load for _, load in stored), longest)
    by_id: dict[str, Counter[Any]] = {rid: Counter() for rid in booked}
    for rid, load in stored:
        if rid in by_id:
            by_id[rid][load] += 1
    for rid, reservation in booked.items():
        if by_id[rid] != Counter(loads_of(as_booking(reservation), topology)):
            problems.append(f"{rid}: stored loads differ from what its paths put on the links")
    return set(booked), problems


def listed(replica: Replica, token: str) -> set[str]:
    answer = httpx.get(
        replica.url + "/v1/reservations",
        params={"state": "held,reserved,active"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return {r["id"] for r in answer.json()["reservations"]}


def widest(replica: Replica, token: str, slots: int) -> list[Any]:
    """The replica's mirror's answer: most bandwidth A -> B in each window, over 4 paths."""
    out = []
    for slot in range(slots):
        start = BASE + slot * 900
        params = {"mode": "max-bandwidth", "src": "A", "dst": "B", "max_paths": "4",
                  "start": iso(start), "end": iso(start + 900)}  # fmt: skip
        answer = httpx.get(
            replica.url + "/v1/availability",
            params=params,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        out.append(answer.json()["max_bandwidth"])  # Mbit/s
    return out


def eventually_equal(replicas: list[Replica], token: str, slots: int) -> tuple[Any, Any]:
    """Both replicas' lists and availability answers, once they agree (or time is up)."""
    deadline = time.monotonic() + SYNC_WAIT_S
    while True:
        seen = [(listed(r, token), widest(r, token, slots)) for r in replicas]
        if all(s == seen[0] for s in seen) or time.monotonic() > deadline:
            return seen[0], seen[1]
        time.sleep(0.2)


def check_replicas(database: str, tmp_path: Path, load: Load) -> None:
    with two_replicas(database, tmp_path) as (replicas, user, operator):
        began = time.monotonic()
        outcome = run_clients(replicas, user, load)
        elapsed = time.monotonic() - began
        first, second = eventually_equal(replicas, operator, load.slots)
    logs = "\n".join(f"--- {r.log.name}\n{r.log.read_text()[-2000:]}" for r in replicas)
    assert outcome.bad == [], logs
    assert set(outcome.statuses) <= {201, 409}, outcome.statuses
    posts = load.threads * load.posts
    assert sum(outcome.statuses.values()) == posts
    # The load is meant to contend: both admissions and refusals must happen.
    assert outcome.statuses[201] and outcome.statuses[409], outcome.statuses
    booked, problems = store_check(database, topology_from_dict(TOPOLOGY))
    assert problems == []
    assert len(outcome.created) == outcome.statuses[201] == len(booked)
    assert outcome.created == booked
    assert first[0] == second[0] == booked
    assert first[1] == second[1], "the replicas' mirrors disagree on what is free"
    print(f"{posts} POSTs in {elapsed:.1f} s: {dict(outcome.statuses)}")


# -- tests -------------------------------------------------------------------------


def check_simultaneous_first_starts(database: str, tmp_path: Path) -> None:
    """Both servers start on an empty store at once: one topology version, both on it."""
    topology = tmp_path / "contended.yaml"
    topology.write_text(yaml.safe_dump(TOPOLOGY))
    replicas = [launch(database, topology, tmp_path / f"first-{n}.log") for n in range(2)]
    try:
        for replica in replicas:
            wait_ready(replica)
        versions = [httpx.get(r.url + "/healthz", timeout=5).json() for r in replicas]
    finally:
        stop(replicas)
    assert [v["topology_version"] for v in versions] == [1, 1]
    repo = open_repository(database)
    try:
        stored = repo.topology()
        assert stored is not None and stored.version == 1
        assert [e.action for e in repo.audit()].count("topology") == 1
    finally:
        repo.close()


@pytest.mark.slow
def test_two_first_starts_at_once_on_postgresql_store_one_topology(
    throwaway_postgres: str, tmp_path: Path
) -> None:
    check_simultaneous_first_starts(throwaway_postgres, tmp_path)


@pytest.mark.slow
def test_two_first_starts_at_once_on_sqlite_store_one_topology(tmp_path: Path) -> None:
    check_simultaneous_first_starts(f"sqlite:///{tmp_path / 'first.db'}", tmp_path)


@pytest.mark.slow
def test_two_replicas_on_postgresql_never_overbook(throwaway_postgres: str, tmp_path: Path) -> None:
    check_replicas(throwaway_postgres, tmp_path, Load(threads=8, posts=25, slots=6))


@pytest.mark.slow
def test_two_replicas_on_one_sqlite_file_never_overbook(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'braid.db'}"
    check_replicas(database, tmp_path, Load(threads=4, posts=15, slots=4))


def test_the_store_check_sees_overbooking_and_forged_loads(tmp_path: Path) -> None:
    """The checker itself: two 6 Mbit/s bookings forced onto one 10 Mbit/s link."""
    topology = topology_from_dict(TOPOLOGY)
    database = f"sqlite:///{tmp_path / 'forced.db'}"
    repo = open_repository(database)
    try:
        repo.put_topology(TOPOLOGY, now=BASE, actor="test")
        for n in range(2):
            path = RoutePath(("A", "B"), ("A-B-1",))
            record = Reservation(
                id=f"r{n}", token=f"t{n}", owner="alice", state=State.RESERVED, src="A",
                dst="B", start=BASE, end=BASE + 900, allocations=(Allocation(path, 6 * MBIT),),
            )  # fmt: skip
            loads = loads_of(as_booking(record), topology)[: 2 - n]  # r1 forgets a direction
            repo.write(
                Change(record, loads), validate=lambda _: [], now=BASE, actor="test",
                action="created", counting=lambda _: True,
            )  # fmt: skip
    finally:
        repo.close()
    booked, problems = store_check(database, topology)
    assert booked == {"r0", "r1"}
    assert any("A-B-1 b->a would carry 12000000 > 10000000" in p for p in problems), problems
    assert any(p.startswith("r1: stored loads differ") for p in problems), problems


def test_a_replica_whose_clock_lags_by_a_second_at_a_hold_expiry_keeps_answering(
    tmp_path: Path,
) -> None:
    """Replica B sees a hold expired and books over it; A, a second behind, still counts it.

    The store was right to accept B's booking (by B's clock the hold is gone).
    For that second A's mirror cannot take it; A must still answer (a refusal
    is fine), and once A's clock passes the expiry its mirror must show B's
    booking and no hold. (This recursed until RecursionError before the
    mirror learnt to let such a booking wait.)
    """
    database = f"sqlite:///{tmp_path / 'skew.db'}"
    clock_a, clock_b = [BASE - 3600], [BASE - 3600]
    repos = [open_repository(database), open_repository(database)]
    try:
        a = ReservationService(repos[0], clock=lambda: clock_a[0], hold_seconds=600)
        a.start(TOPOLOGY)
        b = ReservationService(repos[1], clock=lambda: clock_b[0], hold_seconds=600)
        b.start()
        alice, window = User("alice", "user"), {"start": iso(BASE), "end": iso(BASE + 900)}
        a_to_b: dict[str, Any] = {"src": "A", "dst": "B", **window}
        rest(a).reserve(alice, {**a_to_b, "bandwidth": 40, "max_paths": 4, "hold": True})
        clock_b[0], clock_a[0] = BASE - 3000, BASE - 3001  # the hold expires at BASE - 3000
        rest(b).reserve(alice, {**a_to_b, "bandwidth": 10})
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(400)  # should the recursion come back, fail in 1 s, not 10
        try:
            with contextlib.suppress(RejectedError):  # either answer is fine; an error is not
                rest(a).reserve(alice, {**a_to_b, "bandwidth": 1})
        finally:
            sys.setrecursionlimit(limit)
        clock_a[0] = BASE - 3000
        operations.tick(a.books)  # records the expired hold, as the ticker of `braid serve` does
        widest = rest(a).availability(alice, {**a_to_b, "mode": "max-bandwidth", "max_paths": 4})
        assert widest["max_bandwidth"] == 30  # 40 Mbit/s A -> B, less B's 10; the hold is gone
    finally:
        for repo in repos:
            repo.close()


def test_a_modification_plans_on_what_the_other_replica_booked(tmp_path: Path) -> None:
    """Replica B widens its booking after A filled the rest of its link: B moves it elsewhere.

    B's mirror last read the store before A's booking. Keeping the same path
    would overbook A-B-1 (the store refuses that write), so B must catch up
    and move the booking to a link with room rather than retry on a stale
    view until it gives up.
    """
    database = f"sqlite:///{tmp_path / 'modify.db'}"
    repos = [open_repository(database), open_repository(database)]
    try:
        a = ReservationService(repos[0], clock=lambda: BASE - 3600)
        a.start(TOPOLOGY)
        b = ReservationService(repos[1], clock=lambda: BASE - 3600)
        b.start()
        alice, window = User("alice", "user"), {"start": iso(BASE), "end": iso(BASE + 900)}
        a_to_b: dict[str, Any] = {"src": "A", "dst": "B", **window}
        mine = rest(b).reserve(alice, {**a_to_b, "bandwidth": 5})
        theirs = rest(a).reserve(alice, {**a_to_b, "bandwidth": 5})
        assert [p["links"] for p in mine["paths"]] == [p["links"] for p in theirs["paths"]]
        wider = rest(b).modify(alice, mine["id"], {"bandwidth": 10})
        assert wider["bandwidth"] == 10
        assert wider["paths"][0]["links"] != theirs["paths"][0]["links"]
    finally:
        for repo in repos:
            repo.close()
