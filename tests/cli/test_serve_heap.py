"""`braid serve` freezes what startup loaded before it serves (`_settle_heap`)."""

from __future__ import annotations

import gc

from braid.cli.serve_cmd import _settle_heap


def test_what_startup_loaded_is_left_out_of_full_collections() -> None:
    loaded = [[n] for n in range(1000)]  # containers the collector tracks
    try:
        _settle_heap()
        assert gc.get_freeze_count() >= len(loaded)
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
