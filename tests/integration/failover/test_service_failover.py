"""Fail-over in `braid serve`: clients book (some protected) while a monitor flaps links.

Two real server processes share one store (one SQLite file, or PostgreSQL);
client threads post reservations A -> B to both while a monitor thread posts
link states up and down to both. Then, from the store:

- no link direction is ever over capacity (standbys included: each booking's
  stored loads are what its two paths put on the links);
- nothing is lost: every 201 is booked, and nothing else is;
- every booked reservation sits where the final link states want it: none
  runs over a down link while it has a whole path booked, and those that
  cannot move are marked degraded; each move is in the audit log.

A second test kills `braid serve` with SIGKILL while link states change, and
checks that a restarted server ends consistent (the same checks), with the
switches left to the provisioning loop's reconcile.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from braid.adapters.store import open_repository
from braid.app.reservations.plan_facts import protection_of
from braid.core.failover.protection import down_links, path_up
from braid.core.model.topology import Topology, topology_from_dict
from tests.integration.test_replicas import (
    BASE,
    TOPOLOGY,
    Replica,
    braid,
    iso,
    launch,
    stop,
    store_check,
    two_replicas,
    wait_ready,
)

LINKS = [str(link["id"]) for link in TOPOLOGY["links"]]
BOOKERS = 6
POSTS = 15
FLAPS = 24


def booking_body(rng: random.Random) -> dict[str, Any]:
    src, dst = rng.sample(["A", "B"], 2)
    start = BASE + rng.randrange(4) * 900
    return {
        "src": src,
        "dst": dst,
        "bandwidth": rng.randint(1, 4),
        "start": iso(start),
        "end": iso(start + 1800),
        "protect": rng.random() < 0.5,
    }


def booker(url: str, token: str, seed: int, created: set[str], bad: list[str]) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        for _ in range(POSTS):
            answer = c.post("/v1/reservations", json=booking_body(rng))
            if answer.status_code == 201:
                created.add(answer.json()["id"])
            elif answer.status_code != 409:
                bad.append(f"{answer.status_code}: {answer.text[:300]}")


def flapper(urls: list[str], token: str, seed: int, statuses: Counter[int], bad: list[str]) -> None:
    rng = random.Random(seed)
    for n in range(FLAPS):
        link, state = rng.choice(LINKS), rng.choice(("up", "down", "down"))
        answer = httpx.post(
            f"{urls[n % len(urls)]}/v1/links/{link}/state",
            json={"state": state},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        statuses[answer.status_code] += 1
        if answer.status_code not in (200, 409):
            bad.append(f"{answer.status_code}: {answer.text[:300]}")


def placement_problems(database: str) -> tuple[Topology, list[str]]:
    """Booked reservations the final link states want elsewhere, and moves missing an audit."""
    repo = open_repository(database)
    try:
        stored = repo.topology()
        assert stored is not None
        topology = topology_from_dict(stored.data)
        down = down_links(topology)
        problems = []
        for r in repo.booked():
            whole = all(path_up(a.path, down) for a in r.allocations)
            paths = protection_of(r.plan)
            if paths is not None and not whole and path_up(paths.inactive, down):
                problems.append(f"{r.id} runs over a down link with its standby whole")
            if whole == ("degraded" in r.plan):
                problems.append(f"{r.id}: degraded={'degraded' in r.plan} but whole={whole}")
            moves = [e for e in repo.audit(r.id) if e.action != "created"]
            if r.version != 1 + len(moves):
                problems.append(f"{r.id}: version {r.version} but {len(moves)} audited moves")
        return topology, problems
    finally:
        repo.close()


def check_flapping(database: str, tmp_path: Path) -> None:
    with two_replicas(database, tmp_path) as (replicas, user, _):
        monitor = braid("token", "create", "--user", "mon", "--role", "monitor",
                        "--database", database)  # fmt: skip
        urls = [r.url for r in replicas]
        created: set[str] = set()
        bad: list[str] = []
        flaps: Counter[int] = Counter()
        with ThreadPoolExecutor(BOOKERS + 1) as pool:
            jobs = [pool.submit(booker, urls[n % 2], user, n, created, bad) for n in range(BOOKERS)]
            jobs.append(pool.submit(flapper, urls, monitor, 99, flaps, bad))
            for job in jobs:
                job.result(timeout=300)
    assert bad == []
    assert flaps[200] > FLAPS // 2, flaps  # most link-state posts went through
    topology = topology_from_dict(TOPOLOGY)
    booked, problems = store_check(database, topology)
    assert problems == []  # 0 overbooked links, loads exactly the booked paths (standbys too)
    assert booked == created and created  # 0 lost reservations
    _, misplaced = placement_problems(database)
    assert misplaced == []


def test_flapping_links_while_clients_book_on_sqlite(tmp_path: Path) -> None:
    check_flapping(f"sqlite:///{tmp_path / 'braid.db'}", tmp_path)


def test_flapping_links_while_clients_book_on_postgresql(
    throwaway_postgres: str, tmp_path: Path
) -> None:
    check_flapping(throwaway_postgres, tmp_path)


def test_a_server_killed_mid_fail_over_restarts_consistent(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'braid.db'}"
    with two_replicas(database, tmp_path) as (replicas, user, operator):
        headers = {"Authorization": f"Bearer {user}"}
        rng = random.Random(7)
        created: set[str] = set()
        for _ in range(20):
            answer = httpx.post(
                replicas[0].url + "/v1/reservations", json=booking_body(rng), headers=headers
            )
            if answer.status_code == 201:
                created.add(answer.json()["id"])
        victim = replicas[0]
        bad: list[str] = []
        # Bookings go on through the other replica while the victim changes link states.
        other = threading.Thread(target=booker, args=(replicas[1].url, user, 8, created, bad))
        other.start()
        answered = flap_until_dead(victim, operator)
        assert answered >= 3  # it died in the middle of a series of link-state changes
        other.join(timeout=120)
        assert bad == []
        assert victim.process.wait(timeout=10) == -signal.SIGKILL
        restarted = relaunch(database, victim, tmp_path)
        replicas[0] = restarted
    booked, problems = store_check(database, topology_from_dict(TOPOLOGY))
    assert problems == [] and booked == created
    _, misplaced = placement_problems(database)
    assert misplaced == []


def flap_until_dead(victim: Replica, operator: str) -> int:
    """Post link states to `victim` and SIGKILL it while a post is in flight; the answers."""
    answered = 0
    ops = {"Authorization": f"Bearer {operator}"}

    def post(n: int) -> None:
        nonlocal answered
        state = ("down", "up")[n // len(LINKS) % 2]
        url = f"{victim.url}/v1/links/{LINKS[n % len(LINKS)]}/state"
        try:
            answer = httpx.post(url, json={"state": state}, headers=ops, timeout=30)
        except httpx.TransportError:
            return  # killed while this one was in flight
        answered += answer.status_code == 200

    for n in range(200):
        flight = threading.Thread(target=post, args=(n,))
        flight.start()
        if answered >= 3:
            time.sleep(random.uniform(0.0, 0.05))  # somewhere inside the change
            os.kill(victim.process.pid, signal.SIGKILL)
            flight.join()  # its post fails: the server is gone
            return answered
        flight.join()
    raise AssertionError("the victim answered every post before it could be killed")


def relaunch(database: str, old: Replica, tmp_path: Path) -> Replica:
    topology = tmp_path / "contended.yaml"
    replica = launch(database, topology, tmp_path / "restarted.log")
    wait_ready(replica)
    stop([old])
    time.sleep(0.1)
    return replica


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
