"""Timing braid against the baseline, query by query, on one unchanging state.

Every query is answered by braid and by the baseline on the same network;
nothing is committed, so all queries see the week of bookings exactly as set
up. Each answer pair is compared: the baseline searches only k paths, so it
may miss what braid finds, but anything it finds that braid misses is a bug.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import baseline as base
from baseline import KPath, Rows
from braid.core.model.booking import Allocation, Booking
from braid.core.model.paths import Path
from braid.core.model.topology import Topology
from braid.core.schedule import all_slots, earliest_start, fixed_path, widest
from workload import DAY, MAX_DURATION, MIN_DURATION, T0, WEEK, Tick, World, log_uniform

K_PATHS = 10
SLOT_DURATION = 3600
# Requests are a little larger than the bookings in place, so that busy links
# refuse a fair share of them and earliest starts get pushed later.
QUERY_SCALE = 2.0

now = time.perf_counter_ns


@dataclass(frozen=True, slots=True)
class Query:
    src: str
    dst: str
    need: int
    start: int
    end: int
    duration: int


@dataclass
class Row:
    """Latencies (ns) and the comparison of one query kind on one topology."""

    topology: str
    nodes: int
    links: int
    kind: str
    braid_ns: list[int] = field(default_factory=list)
    base_ns: list[int] = field(default_factory=list)
    agree: int = 0
    braid_better: int = 0
    feasible: int = 0
    bugs: list[str] = field(default_factory=list)
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def judge(self, verdict: str, detail: str) -> None:
        """Count one comparison: 'agree', 'better' (braid found more) or 'bug'."""
        if verdict == "agree":
            self.agree += 1
        elif verdict == "better":
            self.braid_better += 1
        else:
            self.bugs.append(detail)


def percentile_ms(values: list[int], q: float) -> float | None:
    if not values:
        return None
    if q == 0.5:
        return statistics.median(values) / 1e6
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] / 1e6


def make_queries(world: World, count: int, seed: int) -> list[Query]:
    """Random pairs and windows inside the busy part of the week."""
    rng = random.Random(f"{seed}:{world.name}:queries")
    nodes = sorted(world.topology.nodes)
    out = []
    for _ in range(count):
        src, dst = rng.sample(nodes, 2)
        duration = int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
        start = T0 + DAY // 2 + rng.randrange(WEEK - DAY - duration)
        need = world.sizes.draw(rng, QUERY_SCALE)
        out.append(Query(src, dst, need, start, start + duration, duration))
    return out


class Candidates:
    """Yen's k shortest paths per pair, with the time they took (charged to the baseline)."""

    def __init__(self, topology: Topology, k: int = K_PATHS) -> None:
        self.topology = topology
        self.k = k
        self._cache: dict[tuple[str, str], tuple[list[KPath], int]] = {}

    def get(self, q: Query) -> tuple[list[KPath], int]:
        key = (q.src, q.dst)
        if key not in self._cache:
            began = now()
            paths = base.yen_k_shortest(self.topology, q.src, q.dst, self.k)
            self._cache[key] = (paths, now() - began)
        return self._cache[key]

    def mean_ms(self) -> float:
        return statistics.fmean(ns for _, ns in self._cache.values()) / 1e6


def as_kpath(topology: Topology, path: Path) -> KPath:
    directions = tuple(path.directions(topology))
    return KPath(path.nodes, path.links, directions, path.latency_ms(topology))


@dataclass(frozen=True)
class Budget:
    """How long a row may run: braid and the baseline each stop once over `seconds`.

    A row always gets `least` queries, so even the slowest rows report a
    median; the baseline can be far slower than braid, hence its own budget.
    """

    seconds: float
    least: int
    base_least: int


@dataclass
class Bench:
    """What every query kind needs: the world, its rows and its candidate paths."""

    world: World
    rows: Rows
    candidates: Candidates
    tick: Tick
    budget: Budget

    def row(self, kind: str) -> Row:
        t = self.world.topology
        return Row(self.world.name, len(t.nodes), len(t.links), kind)

    def enough(self, row: Row) -> bool:
        """Stop asking braid: its budget is spent and the minimum is met."""
        spent = sum(row.braid_ns) / 1e9
        return len(row.braid_ns) >= self.budget.least and spent > self.budget.seconds

    def baseline_call(
        self, row: Row, q: Query, fn: Callable[[list[KPath]], Any]
    ) -> tuple[bool, Any]:
        """Run the baseline unless its budget is spent; (ran, answer)."""
        spent = sum(row.base_ns) / 1e9
        if len(row.base_ns) >= self.budget.base_least and spent > self.budget.seconds:
            return False, None
        paths, yen_ns = self.candidates.get(q)
        began = now()
        answer = fn(paths)
        row.base_ns.append(now() - began + yen_ns)
        return True, answer

    def check_path(self, row: Row, q: Query, path: Path, need: int, start: int) -> None:
        """braid's path must also pass the independent sweep (no overbooking)."""
        kpath = as_kpath(self.world.topology, path)
        if not self.rows.fits(kpath, need, start, start + (q.end - q.start)):
            row.bugs.append(f"braid path {path.links} overbooks at {start} for {q}")


def run_fixed(b: Bench, queries: list[Query]) -> Row:
    """Fixed-slot admission: path search plus the commit check, nothing committed."""
    row, network = b.row("fixed"), b.world.network
    for q in queries:
        if b.enough(row):
            break
        began = now()
        path = fixed_path(network, q.src, q.dst, q.need, q.start, q.end)
        short = path is not None and network.shortfall(
            Booking("probe", q.start, q.end, (Allocation(path, q.need),))
        )
        row.braid_ns.append(now() - began)
        ok = path is not None and not short
        row.feasible += ok
        if path is not None:
            b.check_path(row, q, path, q.need, q.start)
        if short:
            row.bugs.append(f"fixed {q}: fixed_path's path fails the commit check: {short}")
        ran, found = b.baseline_call(
            # baseline_call runs the callback at once, so `q` is this iteration's.
            row,
            q,
            lambda ps: base.fixed(b.rows, ps, q.need, q.start, q.end),  # noqa: B023
        )
        if ran:
            row.judge(_verdict(ok, found is not None), f"fixed {q}: baseline fits, braid refuses")
        b.tick(1)
    return row


def _verdict(braid_ok: bool, base_ok: bool) -> str:
    if braid_ok == base_ok:
        return "agree"
    return "better" if braid_ok else "bug"


def run_earliest(b: Bench, queries: list[Query]) -> Row:
    """Earliest start from the query's start (as not_before), then the path at the answer."""
    row, network = b.row("earliest"), b.world.network
    pushed = 0
    for q in queries:
        if b.enough(row):
            break
        began = now()
        tau = earliest_start(network, q.src, q.dst, q.need, q.duration, q.start)
        path = None
        if tau is not None:
            path = fixed_path(network, q.src, q.dst, q.need, tau, tau + q.duration)
        row.braid_ns.append(now() - began)
        row.feasible += tau is not None
        pushed += tau is not None and tau > q.start
        if tau is not None and path is None:
            row.bugs.append(f"earliest {q}: start {tau} found but no path there")
        elif tau is not None and path is not None:
            b.check_path(row, q, path, q.need, tau)
        ran, found = b.baseline_call(
            row,
            q,
            lambda ps: base.earliest(b.rows, ps, q.need, q.duration, q.start),  # noqa: B023
        )
        if ran:
            verdict = _earliest_verdict(tau, found)
            row.judge(verdict, f"earliest {q}: braid {tau}, baseline {found}")
        b.tick(1)
    row.extra["later_than_not_before"] = pushed
    return row


def _earliest_verdict(tau: int | None, found: int | None) -> str:
    if tau == found:
        return "agree"
    if found is None or (tau is not None and tau < found):
        return "better"
    return "bug"


def run_all_slots(b: Bench, queries: list[Query]) -> Row:
    """Every 1-hour start over the whole week; braid's set must contain the baseline's."""
    row, network = b.row("all-slots 7d"), b.world.network
    lo, hi = T0, T0 + WEEK - SLOT_DURATION + 1
    empty = 0
    for q in queries:
        if b.enough(row):
            break
        began = now()
        slots = all_slots(network, q.src, q.dst, q.need, SLOT_DURATION, lo, hi)
        row.braid_ns.append(now() - began)
        mine = list(slots.spans)
        row.feasible += bool(mine)
        empty += not mine
        ran, spans = b.baseline_call(
            row,
            q,
            lambda ps: base.all_slots(b.rows, ps, q.need, SLOT_DURATION, lo, hi),  # noqa: B023
        )
        if ran:
            covered = base.merge([*mine, *spans]) == base.merge(mine)
            verdict = "agree" if mine == spans else ("better" if covered else "bug")
            row.judge(verdict, f"all-slots {q}: baseline has starts braid lacks")
        b.tick(1)
    row.extra["no_slot_at_all"] = empty
    return row


def run_widest(b: Bench, queries: list[Query]) -> Row:
    """Highest bandwidth one path carries in the window; braid's must be at least the baseline's."""
    row, network = b.row("max-bandwidth"), b.world.network
    for q in queries:
        if b.enough(row):
            break
        began = now()
        found = widest(network, q.src, q.dst, q.start, q.end)
        row.braid_ns.append(now() - began)
        width = 0 if found is None else found[1]
        row.feasible += width > 0
        if found is not None:
            b.check_path(row, q, found[0], width, q.start)
        ran, best = b.baseline_call(
            row,
            q,
            lambda ps: base.widest(b.rows, ps, q.start, q.end),  # noqa: B023
        )
        if ran:
            verdict = "agree" if width == best else ("better" if width > best else "bug")
            row.judge(verdict, f"max-bandwidth {q}: braid {width}, baseline {best}")
        b.tick(1)
    return row


def split_needs(b: Bench, queries: list[Query], seed: int) -> list[int]:
    """Needs between 0.8x and 2.5x the widest single path, so one path is often short."""
    rng = random.Random(f"{seed}:{b.world.name}:split")
    needs = []
    for q in queries:
        found = widest(b.world.network, q.src, q.dst, q.start, q.end)
        width = found[1] if found else q.need
        needs.append(max(1_000_000, int(width * rng.uniform(0.8, 2.5)) // 1_000_000 * 1_000_000))
    return needs


def run_split(b: Bench, queries: list[Query], split_fixed: Callable[..., Any], seed: int) -> Row:
    """k = 4 flow-level split; no baseline (OSCARS books one path), so plans are checked."""
    row, network = b.row("split k=4"), b.world.network
    rescued = 0
    for q, need in zip(queries, split_needs(b, queries, seed), strict=True):
        if b.enough(row):
            break
        began = now()
        outcome = split_fixed(network, q.src, q.dst, need, q.start, q.end, max_paths=4, mode="flow")
        row.braid_ns.append(now() - began)
        allocations = getattr(outcome, "allocations", None)
        single = fixed_path(network, q.src, q.dst, need, q.start, q.end) is not None
        if allocations is None:
            row.judge("agree" if not single else "bug", f"split {q} need {need}: refused")
        else:
            row.feasible += 1
            rescued += not single
            row.judge(_plan_verdict(b, allocations, need, q), f"split {q} need {need}: bad plan")
        b.tick(1)
    row.extra["rescued_by_split"] = rescued
    row.note = "no baseline (a one-path system cannot split); plans checked by the sweep"
    return row


def _plan_verdict(b: Bench, allocations: tuple[Allocation, ...], need: int, q: Query) -> str:
    """A plan must sum to `need` and fit on the rows' independent sweep."""
    topology = b.world.topology
    loads: dict[tuple[str, bool], int] = {}
    for a in allocations:
        for link, forward in a.path.directions(topology):
            for key in ((link, forward), (link, not forward)):
                loads[key] = loads.get(key, 0) + a.bandwidth
    fits = b.rows.loads_fit(loads, q.start, q.end)
    return "agree" if fits and sum(a.bandwidth for a in allocations) == need else "bug"
