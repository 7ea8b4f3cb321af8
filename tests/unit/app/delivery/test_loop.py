"""The sampling loop: a failing pass is logged, not fatal; a failing read is logged once."""

from __future__ import annotations

import logging

import pytest

from braid.app.delivery.loop import DeliveryLoop
from braid.app.delivery.sampler import DeliverySampler, SamplePass
from tests.unit.app.delivery.world import World


class Broken(DeliverySampler):
    def sample(self, now: int) -> SamplePass:
        raise RuntimeError("store gone")


def test_a_pass_that_raises_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    world = World()
    s = world.sampler
    loop = DeliveryLoop(Broken(s.targets, s.counters, s.history, s.audit), world.clock, 5)
    with caplog.at_level(logging.ERROR):
        assert loop.run_pass() is None
    assert "delivery sampling failed" in caplog.text


def test_an_unreadable_reservation_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    world = World()
    rid = world.book()
    world.install()
    world.counters.refuse["s1"] = "no answer"
    loop = DeliveryLoop(world.sampler, world.clock, 5)
    with caplog.at_level(logging.WARNING):
        loop.run_pass()
        loop.run_pass()
    assert caplog.text.count(f"cannot read reservation {rid}") == 1
    assert loop.last is not None and rid in loop.last.failed


def test_the_thread_starts_and_stops() -> None:
    world = World()
    loop = DeliveryLoop(world.sampler, world.clock, 1)
    loop.start()
    loop.stop()
    assert not loop._thread.is_alive()
