"""Topology Zoo networks with a day of random bookings, and random volume asks on them."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path as FsPath

import pytest

from braid.adapters.topology_files import load_topology
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.schedule import fixed_path
from braid.core.volume import VolumeAsk

# The data sets checked out next to the repository, as `../shared/data`.
ZOO = FsPath(__file__).resolve().parents[4].parent / "shared" / "data" / "topology-zoo"
G = 10**9  # bit/s in one Gbit/s
T0 = 1_800_000_000
DAY = 86_400


def zoo_network(name: str, rng: random.Random) -> Network:
    """The Topology Zoo graph through braid's GraphML import, links of 10 to 100 Gbit/s.

    Whole Gbit/s keep the oracle's LP in small whole numbers.
    """
    path = ZOO / f"{name}.graphml"
    if not path.is_file():
        pytest.skip(f"Topology Zoo file {path.name} not found in {path.parent}")
    topology = load_topology(path, default_capacity_bps=10 * G)
    links = {
        k: replace(link, capacity=rng.randint(1, 10) * 10 * G) for k, link in topology.links.items()
    }
    return Network(replace(topology, links=links))


def book_day(network: Network, rng: random.Random, count: int) -> None:
    """Random bookings over a day (a third one-way), so free capacity varies over time."""
    nodes = sorted(network.topology.nodes)
    for i in range(count):
        src, dst = rng.sample(nodes, 2)
        start = T0 + rng.randrange(DAY)
        end = start + rng.randint(600, 6 * 3600)
        need = rng.randint(1, 40) * G
        symmetric = rng.random() > 1 / 3
        path = fixed_path(network, src, dst, need, start, end, symmetric=symmetric)
        if path is not None:
            network.commit(Booking(f"b{i}", start, end, (Allocation(path, need),), symmetric))


def random_ask(network: Network, rng: random.Random, *, max_paths: int) -> VolumeAsk:
    """A volume of a rate times a duration, due at the end, some capped, some one-way."""
    src, dst = rng.sample(sorted(network.topology.nodes), 2)
    not_before = T0 + rng.randrange(DAY)
    duration = rng.randint(600, 6 * 3600)
    bits = rng.randint(1, 40) * G * duration + rng.randrange(G)
    max_rate = rng.choice([None, None, rng.randint(1, 60) * G])
    return VolumeAsk(
        src,
        dst,
        bits,
        not_before,
        not_before + duration,
        max_rate=max_rate,
        max_paths=max_paths,
        symmetric=rng.random() > 0.25,
    )
