"""`braid serve`, agents and orchestrators freeze what startup loaded (`settle_heap`)."""

from __future__ import annotations

import gc

from braid.cli.common import settle_heap


def test_what_startup_loaded_is_left_out_of_full_collections() -> None:
    loaded = [[n] for n in range(1000)]  # containers the collector tracks
    try:
        settle_heap()
        assert gc.get_freeze_count() >= len(loaded)
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual


def test_an_agent_collects_its_youngest_objects_less_often() -> None:
    before = gc.get_threshold()
    try:
        settle_heap(10_000)
        assert gc.get_threshold() == (10_000, *before[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
