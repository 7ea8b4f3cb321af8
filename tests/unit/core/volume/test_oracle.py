"""plan_volume against a brute-force LP over the time-expanded network (`oracle`)."""

from __future__ import annotations

import random

import pytest

from braid.core.volume import VolumePlan, VolumeRefusal, plan_volume, quickest_transfer
from tests.unit.core.volume.oracle import Oracle
from tests.unit.core.volume.worlds import book_day, random_ask, zoo_network

NETWORKS = ["Abilene", "Geant2012", "Esnet"]
ASKS = 6


@pytest.mark.parametrize("name", NETWORKS)
def test_agrees_with_the_lp_on_a_random_workload(name: str) -> None:
    rng = random.Random(f"volume oracle {name}")
    network = zoo_network(name, rng)
    book_day(network, rng, 40)
    unrestricted = 2 * len(network.topology.links) + 1  # more than any decomposition has
    for _ in range(ASKS):
        ask = random_ask(network, rng, max_paths=unrestricted)
        oracle = Oracle(network, ask)
        assert ask.deadline is not None
        most = oracle.most_by(ask.deadline)
        earliest = oracle.earliest()
        answer = plan_volume(network, ask)
        if most >= ask.bits:
            assert isinstance(answer, VolumePlan), (ask, answer)
            assert answer.completion == earliest
        else:
            assert isinstance(answer, VolumeRefusal), (ask, answer)
            assert answer.most_by_deadline == most
            assert answer.earliest_completion == earliest
        quickest = quickest_transfer(network, ask)
        assert (quickest.completion if quickest is not None else None) == earliest
