"""Book one reservation, then answer one refused earliest start: the online refusal path.

Run from the repository root:

    .venv/bin/python bench/stack_bench.py [--rounds 200] [--bookings 10000]

On Esnet with a week of bookings, every round books one request that fits
and then asks for the earliest start of one that does not fit at once (what
`Planner._reject` does after a refusal). Two networks hold the same
bookings: on one the stack is dropped after every booking and rebuilt from
every timeline when a long window needs it (the old way, the baseline); the
other's stack follows the bookings, patching only the rows they changed.
The refusal is answered on both, and once more on the second told that the
requested start was refused already (`refused_at_start`, which the planner
knows when it looks for alternatives). The answers must agree; the CPU
times are printed with the ratios.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.schedule import earliest_start, fixed_path
from workload import DAY, MAX_DURATION, MIN_DURATION, T0, WEEK, World, build_world, log_uniform

# Refused requests ask this much more than the bookings in place (as the
# service bench's latency run does), so a fair share does not fit at once.
REFUSED_SCALE = 2.0

T = TypeVar("T")


@dataclass(frozen=True)
class Ask:
    src: str
    dst: str
    need: int
    start: int
    duration: int


def draw(world: World, rng: random.Random, scale: float) -> Ask:
    src, dst = rng.sample(sorted(world.topology.nodes), 2)
    duration = int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
    start = T0 + DAY // 2 + rng.randrange(WEEK - DAY - duration)
    return Ask(src, dst, world.sizes.draw(rng, scale), start, duration)


def fits(network: Network, ask: Ask) -> bool:
    end = ask.start + ask.duration
    return fixed_path(network, ask.src, ask.dst, ask.need, ask.start, end) is not None


def cpu_ns(work: Callable[..., T], *args: object) -> tuple[int, T]:
    """The CPU time of `work(*args)` and its result."""
    began = time.process_time_ns()
    out = work(*args)
    return time.process_time_ns() - began, out


def book_one(worlds: tuple[World, World], rng: random.Random, n: int) -> tuple[int, int]:
    """Commit one request that fits on both networks; the CPU time of each commit."""
    network = worlds[0].network
    while True:
        ask = draw(worlds[0], rng, 1.0)
        end = ask.start + ask.duration
        path = fixed_path(network, ask.src, ask.dst, ask.need, ask.start, end)
        if path is not None:
            booking = Booking(f"bench{n}", ask.start, end, (Allocation(path, ask.need),))
            old, _ = cpu_ns(worlds[0].network.commit, booking)
            worlds[0].network.forget_stack()  # what every change did before
            new, _ = cpu_ns(worlds[1].network.commit, booking)
            return old, new


def refused(world: World, rng: random.Random) -> Ask:
    while True:
        ask = draw(world, rng, REFUSED_SCALE)
        if not fits(world.network, ask):
            return ask


def answer(network: Network, ask: Ask, refused: bool = False) -> int | None:
    return earliest_start(
        network, ask.src, ask.dst, ask.need, ask.duration, ask.start, refused_at_start=refused
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="book + refusal rounds")
    parser.add_argument("--bookings", type=int, default=10_000, help="bookings tried first")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--topology", default="Esnet", help="Topology Zoo name")
    args = parser.parse_args(argv)
    # Two networks with the same bookings: the old way and the incremental one.
    worlds = tuple(
        build_world(args.topology, args.bookings, args.seed, lambda _: None) for _ in "ab"
    )
    old_world, world = worlds
    for each in worlds:
        each.network.stack()  # both start from a built stack, as a running server has it
    rng = random.Random(f"{args.seed}:stack-bench")
    books: list[tuple[int, int]] = []
    fresh: list[int] = []
    rebuilt: list[int] = []
    hinted: list[int] = []
    for n in range(args.rounds):
        books.append(book_one((old_world, world), rng, n))
        ask = refused(world, rng)
        spent, slow = cpu_ns(answer, old_world.network, ask)
        rebuilt.append(spent)
        spent, quick = cpu_ns(answer, world.network, ask)
        fresh.append(spent)
        spent, told = cpu_ns(answer, world.network, ask, True)
        hinted.append(spent)
        if not quick == slow == told:
            raise SystemExit(f"round {n}: incremental {quick} != rebuilt {slow} for {ask}")
    before = statistics.fmean(o + r for (o, _), r in zip(books, rebuilt, strict=True)) / 1e6
    after = statistics.fmean(n + f for (_, n), f in zip(books, fresh, strict=True)) / 1e6
    hinted_ms = statistics.fmean(n + h for (_, n), h in zip(books, hinted, strict=True)) / 1e6
    print(f"{args.topology}: {world.placed:,} bookings placed, {args.rounds} rounds")
    print(f"  book + refusal, stack rebuilt   {before:7.3f} ms CPU (baseline)")
    print(f"  book + refusal, incremental     {after:7.3f} ms CPU")
    print(f"  ratio baseline / incremental    {before / after:7.2f} x")
    print(f"  incremental, refused_at_start   {hinted_ms:7.3f} ms CPU (x{before / hinted_ms:.2f})")
    print(
        f"  refusal medians: rebuilt {statistics.median(rebuilt) / 1e6:.3f} ms, "
        f"incremental {statistics.median(fresh) / 1e6:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
