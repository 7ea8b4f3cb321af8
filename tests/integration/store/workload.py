"""Reservations, a real capacity validator and writers, shared by the store tests.

Writers live in this importable module so `multiprocessing` can start them
in fresh (spawned) processes.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import text

from braid.app.ports import Change, ConflictError, Repository, Validator
from braid.app.records import LinkLoad, Reservation
from braid.core.model.booking import Allocation
from braid.core.model.network import Direction
from braid.core.model.paths import Path
from braid.core.planning.lifecycle import State

_IMPORTED = time.monotonic()
GBIT = 1_000_000_000
CAPACITY = 10 * GBIT
LINKS = ("A-B", "B-C", "C-D")  # one path A-B-C-D: every writer loads all three links
PATH = Path(("A", "B", "C", "D"), LINKS)


def reservation(
    rid: str,
    *,
    start: int = 1_000,
    end: int = 2_000,
    bandwidth: int = GBIT,
    owner: str = "alice",
    state: State = State.RESERVED,
    hold_expires_at: int | None = None,
    path: Path = PATH,
) -> Reservation:
    return Reservation(
        id=rid,
        token=f"token-{rid}",
        owner=owner,
        state=state,
        src=path.nodes[0],
        dst=path.nodes[-1],
        start=start,
        end=end,
        allocations=(Allocation(path, bandwidth),),
        request={"bandwidth": bandwidth, "mode": "fixed"},
        plan={"split": "flow", "weights": [1.0]},
        hold_expires_at=hold_expires_at,
    )


def loads_of(res: Reservation) -> tuple[LinkLoad, ...]:
    """Both directions of every link of every path (all test paths run a -> b)."""
    out = []
    for allocation in res.allocations:
        for link in allocation.path.links:
            for forward in (True, False):
                out.append(LinkLoad(link, forward, res.start, res.end, allocation.bandwidth))
    return tuple(out)


def change(res: Reservation, topology_version: int | None = None) -> Change:
    return Change(res, loads_of(res), topology_version)


def peaks(loads: Iterable[LinkLoad]) -> dict[Direction, int]:
    """Highest total load on each link direction at any instant (sweep over start/end)."""
    events: defaultdict[Direction, list[tuple[int, int]]] = defaultdict(list)
    for load in loads:
        events[load.direction] += [(load.start, load.bandwidth), (load.end, -load.bandwidth)]
    out: dict[Direction, int] = {}
    for direction, points in events.items():
        level = peak = 0
        # Half-open windows: at one instant releases (negative) sort before bookings.
        for _, delta in sorted(points):
            level += delta
            peak = max(peak, level)
        out[direction] = peak
    return out


def capacity_validator(new: Sequence[LinkLoad], capacity: int = CAPACITY) -> Validator:
    def validate(existing: Sequence[LinkLoad]) -> list[str]:
        return [
            f"{link} {'forward' if forward else 'reverse'} would peak at {peak} > {capacity}"
            for (link, forward), peak in sorted(peaks([*existing, *new]).items())
            if peak > capacity
        ]

    return validate


def always(_: Reservation) -> bool:
    return True


def book(repo: Repository, res: Reservation, *, now: int = 100, **kwargs: Any) -> Reservation:
    """Write `res` checked against capacity, as the service would."""
    ch = change(res, kwargs.pop("topology_version", None))
    return repo.write(
        ch,
        validate=capacity_validator(ch.loads),
        now=now,
        actor=res.owner,
        action=kwargs.pop("action", "created"),
        counting=kwargs.pop("counting", always),
        **kwargs,
    )


@dataclass
class Outcome:
    written: list[str]
    conflicts: int
    cancelled: list[str]
    errors: list[str]


def run_writer(repo: Repository, name: str, count: int, seed: int) -> Outcome:
    """`count` random 3-Gbit/s bookings on the shared links; cancels some that succeed."""
    rng = random.Random(seed)
    outcome = Outcome([], 0, [], [])
    for i in range(count):
        start = rng.randrange(0, 100)
        res = reservation(
            f"{name}-{i}", start=start, end=start + rng.randrange(5, 40), bandwidth=3 * GBIT
        )
        try:
            book(repo, res, now=i)
        except ConflictError:
            outcome.conflicts += 1
            continue
        except Exception as error:  # any other failure is a bug the test must show
            outcome.errors.append(f"{res.id}: {error!r}")
            continue
        outcome.written.append(res.id)
        if rng.random() < 0.2:
            repo.set_state(res.id, State.CANCELLED, now=i, actor=name, detail={})
            outcome.cancelled.append(res.id)
    return outcome


def process_writer(url: str, name: str, count: int, seed: int, threads: int = 4) -> Outcome:
    """`threads` writers in this process, with an engine of its own on the shared database."""
    from concurrent.futures import ThreadPoolExecutor

    from braid.adapters.store import SqlRepository, create_engine_from_url

    repo = SqlRepository(create_engine_from_url(url))
    try:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(
                pool.map(
                    lambda n: run_writer(repo, f"{name}.{n}", count, seed * 100 + n),
                    range(threads),
                )
            )
    finally:
        repo.close()
    return Outcome(
        [rid for p in parts for rid in p.written],
        sum(p.conflicts for p in parts),
        [rid for p in parts for rid in p.cancelled],
        [e for p in parts for e in p.errors],
    )


def first_start(url: str, not_before: float) -> str:
    """Open a repository on a fresh database, as a process starting up; the revision found.

    Both processes wait until `not_before` seconds after import so that their
    migrations really run at once.
    """
    from braid.adapters.store import open_repository

    time.sleep(max(0.0, not_before - (time.monotonic() - _IMPORTED)))
    repo = open_repository(url)
    try:
        with repo.engine.connect() as connection:
            return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar())
    finally:
        repo.close()


class HasEngine(Protocol):
    @property
    def engine(self) -> Any: ...


def table_overbooking(repo: HasEngine, capacity: int = CAPACITY) -> list[str]:
    """Recompute usage over time from the link_loads table itself; list any excess."""
    query = text(
        'SELECT l.link_id, l.forward, l.start, l."end", l.bandwidth FROM link_loads l '
        "JOIN reservations r ON r.id = l.reservation_id "
        "WHERE r.state IN ('held', 'reserved', 'active')"
    )
    with repo.engine.connect() as connection:
        rows = connection.execute(query).all()
        longest = dict(connection.execute(text("SELECT id, longest_load FROM links")).all())
    loads = [LinkLoad(r[0], bool(r[1]), r[2], r[3], r[4]) for r in rows]
    return excess(loads, capacity) + unbounded(loads, longest)


def unbounded(loads: Iterable[LinkLoad], longest: dict[str, int]) -> list[str]:
    """Loads longer than their link's `longest_load`: the loads check could miss them."""
    return [
        f"{load.link}: a load of {load.end - load.start} s, longest_load {longest.get(load.link)}"
        for load in loads
        if load.end - load.start > longest.get(load.link, -1)
    ]


def excess(loads: Iterable[LinkLoad], capacity: int = CAPACITY) -> list[str]:
    return [f"{d} peaks at {p}" for d, p in sorted(peaks(loads).items()) if p > capacity]


def memory_overbooking(repo: Any, capacity: int = CAPACITY) -> list[str]:
    booked = {r.id for r in repo.booked()}
    return excess((load for rid, load in repo.link_loads() if rid in booked), capacity)
