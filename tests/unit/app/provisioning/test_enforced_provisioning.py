"""A reservation's rates on fake switches: its meters and queues go in and out with its rules,
follow a modification, and stay out when enforcement is off."""

from __future__ import annotations

import dataclasses

from braid.app.reservations.commands import Modify, Reserve
from braid.core.model.instants import format_instant
from braid.core.provisioning.status import Phase
from tests.unit.app.provisioning.test_provisioner import ALICE, LEAD, T0, World


def _book(world: World, policing: str | None, mbps: int = 400) -> str:
    body = {
        "src": "s1",
        "dst": "s3",
        "bandwidth": mbps,
        "start": format_instant(T0 + 100),
        "end": format_instant(T0 + 200),
    }
    if policing is not None:
        body["policing"] = policing
    return world.service.reserve(ALICE, Reserve.parse(body)).record.id


def _meter_rates(world: World) -> set[int]:
    return {m.rate_kbps for t in world.braid_tables().values() for m in t.meters}


def _queue_floors(world: World) -> set[int]:
    return {q.min_rate for t in world.braid_tables().values() for q in t.queues}


def _installed(world: World, rid: str) -> None:
    provisioner = world.provisioner()
    world.clock.now = T0 + 100 - LEAD
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.INSTALLED and world.carries()


def test_a_hard_reservation_is_metered_and_queued_and_cancel_takes_both_out() -> None:
    world = World()
    rid = _book(world, "hard")
    assert world.repo.get(rid).plan["policing"] == "hard"  # type: ignore[union-attr]
    _installed(world, rid)
    assert _meter_rates(world) == {400_000}
    assert _queue_floors(world) == {400_000_000}
    world.service.cancel(ALICE, rid)
    world.provisioner().step(world.clock.now)
    assert world.phase(rid) is Phase.REMOVED and world.braid_tables() == {}


def test_soft_is_the_default_queues_without_meters() -> None:
    world = World()
    rid = _book(world, None)
    _installed(world, rid)
    assert _meter_rates(world) == set()
    queues = [q for t in world.braid_tables().values() for q in t.queues]
    assert queues and all(q.borrows for q in queues)


def test_a_modified_rate_moves_the_meter_and_the_policing_stays() -> None:
    world = World()
    rid = _book(world, "hard")
    _installed(world, rid)
    world.clock.now = T0 + 120
    world.service.modify(ALICE, rid, Modify(bandwidth=200_000_000))
    assert world.repo.get(rid).plan["policing"] == "hard"  # type: ignore[union-attr]
    world.provisioner().step(world.clock.now)
    assert world.carries() and _meter_rates(world) == {200_000}
    assert _queue_floors(world) == {200_000_000}


def test_with_enforcement_off_the_rules_only_route() -> None:
    world = World()
    world.wiring = dataclasses.replace(world.wiring, enforce=False)
    rid = _book(world, "hard")
    _installed(world, rid)
    assert _meter_rates(world) == set() and _queue_floors(world) == set()
