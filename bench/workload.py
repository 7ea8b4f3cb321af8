"""The benchmark's world: topologies, a week of random bookings, and random queries.

Everything is drawn from one seeded generator so that two runs on the same
code see the same state and the same queries.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from braid.adapters.topology_files import load_topology
from braid.core.graph.search import shortest_feasible_path
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.topology import Topology
from braid.core.schedule import fixed_path

DAY = 86_400
WEEK = 7 * DAY
# A fixed origin in 2027, far from any epoch edge; only differences matter.
T0 = 1_800_000_000
GBPS = 10**9
DEFAULT_CAPACITY = 100 * GBPS
MIN_DURATION, MAX_DURATION = 600, 6 * 3600
# Mean utilisation the bookings aim at, averaged over all link directions and
# the week: enough that busy core links saturate and a fair share of
# queries are refused or pushed later, while most still fit somewhere.
TARGET_UTILISATION = 0.28
# Booking sizes spread over a 16x range (log-uniform): many small flows, a
# few elephants that fill a 10G link on their own.
SIZE_SPREAD = 16.0

Tick = Callable[[int], None]


def shared_data_dir() -> Path:
    """The Topology Zoo folder beside the repository, or $BRAID_SHARED_DATA."""
    override = os.environ.get("BRAID_SHARED_DATA")
    base = Path(override) if override else Path(__file__).resolve().parents[1].parent / "shared"
    base = base / "data" if (base / "data").is_dir() else base
    return base / "topology-zoo"


def load_zoo(name: str) -> tuple[Topology, Path]:
    path = shared_data_dir() / f"{name}.graphml"
    return load_topology(path, default_capacity_bps=DEFAULT_CAPACITY), path


def log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


@dataclass
class SizeModel:
    """Log-uniform bandwidths in [lo, lo * SIZE_SPREAD], in bit/s."""

    lo: float

    def draw(self, rng: random.Random, scale: float = 1.0) -> int:
        value = log_uniform(rng, self.lo * scale, self.lo * SIZE_SPREAD * scale)
        return max(1_000_000, int(value) // 1_000_000 * 1_000_000)  # whole Mbit/s

    @property
    def mean(self) -> float:
        return self.lo * (SIZE_SPREAD - 1) / math.log(SIZE_SPREAD)


def mean_hops(topology: Topology, rng: random.Random, samples: int = 60) -> float:
    """Average hop count of lowest-latency paths between random node pairs."""
    nodes = sorted(topology.nodes)
    counts = []
    for _ in range(samples):
        src, dst = rng.sample(nodes, 2)
        path = shortest_feasible_path(topology, src, dst, lambda hop: 1, 1)
        if path is not None:
            counts.append(len(path.links))
    return statistics.fmean(counts) if counts else 1.0


def size_model(topology: Topology, bookings: int, rng: random.Random) -> SizeModel:
    """Sizes that bring the average link direction to TARGET_UTILISATION.

    Concurrent bookings ~ N * E[duration] / week; each loads ~mean_hops links
    in both directions, so per-direction load ~ concurrent * hops / links *
    E[size]. Solving for E[size] against the median capacity keeps the
    difficulty comparable across networks of very different size.
    """
    mean_duration = (MAX_DURATION - MIN_DURATION) / math.log(MAX_DURATION / MIN_DURATION)
    concurrent = bookings * mean_duration / WEEK
    per_link = concurrent * mean_hops(topology, rng) / len(topology.links)
    median_capacity = statistics.median(link.capacity for link in topology.links.values())
    mean_size = TARGET_UTILISATION * median_capacity / max(per_link, 1e-9)
    return SizeModel(lo=mean_size * math.log(SIZE_SPREAD) / (SIZE_SPREAD - 1))


@dataclass
class World:
    """One topology with its week of bookings, ready for queries."""

    name: str
    file: Path
    topology: Topology
    network: Network
    sizes: SizeModel
    tried: int = 0
    placed: int = 0
    setup_s: float = 0.0
    load: dict[str, float] = field(default_factory=dict)


def book_week(world: World, count: int, rng: random.Random, tick: Tick) -> None:
    """Try `count` random bookings; keep those whose fixed slot has a path."""
    nodes = sorted(world.topology.nodes)
    network = world.network
    for i in range(count):
        src, dst = rng.sample(nodes, 2)
        start = T0 + rng.randrange(WEEK)
        end = start + int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
        need = world.sizes.draw(rng)
        path = fixed_path(network, src, dst, need, start, end)
        world.tried += 1
        if path is not None:
            network.commit(Booking(f"b{i}", start, end, (Allocation(path, need),)))
            world.placed += 1
        tick(1)


def load_stats(network: Network) -> dict[str, float]:
    """Time-averaged and peak utilisation of every link direction over the week."""
    means, peaks = [], []
    for timeline in network.timelines().values():
        area = peak = 0
        for a, b, level in timeline.steps(T0, T0 + WEEK):
            area += (b - a) * level
            peak = max(peak, level)
        means.append(area / WEEK / timeline.capacity)
        peaks.append(peak / timeline.capacity)
    means.sort()
    return {
        "mean_utilisation": statistics.fmean(means),
        "p90_utilisation": means[int(0.9 * (len(means) - 1))],
        "max_utilisation": means[-1],
        "share_peak_over_90pct": sum(p >= 0.9 for p in peaks) / len(peaks),
        "share_peak_full": sum(p >= 0.999 for p in peaks) / len(peaks),
    }


def build_world(name: str, bookings: int, seed: int, tick: Tick) -> World:
    topology, file = load_zoo(name)
    rng = random.Random(f"{seed}:{name}")
    world = World(name, file, topology, Network(topology), size_model(topology, bookings, rng))
    began = _now_s()
    book_week(world, bookings, rng, tick)
    world.setup_s = _now_s() - began
    world.load = load_stats(world.network)
    return world


def _now_s() -> float:
    return time.perf_counter_ns() / 1e9
