"""A volume reservation on fake switches: its rules follow the step in force and change,
without a gap in the traffic, where the profile's paths change."""

from __future__ import annotations

from braid.app.reservations.commands import Modify, Reserve
from braid.core.model.instants import format_instant
from braid.core.provisioning.status import Phase
from braid.core.rules.model import GroupKind
from tests.unit.app.provisioning.test_provisioner import ALICE, LEAD, T0, World


def _book_volume(world: World) -> str:
    body = {
        "mode": "volume",
        "src": "s1",
        "dst": "s3",
        # 2 Gbit/s for 50 s on two paths while l23 is full, then 3 Gbit/s on three.
        "volume": "31250MB",
        "not_before": format_instant(T0 + 100),
        "deadline": format_instant(T0 + 300),
        "max_paths": 3,
    }
    return world.service.reserve(ALICE, Reserve.parse(body)).record.id


def _select_buckets(world: World) -> int:
    table = world.tables.read("s1")
    return max(len(g.buckets) for g in table.groups if g.kind is GroupKind.SELECT)


def test_rules_follow_the_profile_and_change_paths_at_the_step() -> None:
    world = World()
    world.book(src="s2", bw=1000, start=100, end=150)  # l23 (s1-s2-s3) full for 50 s
    rid = _book_volume(world)
    record = world.repo.get(rid)
    assert record is not None and record.end == T0 + 200
    assert len(record.plan["vlans"]) == 3  # one per path the profile uses
    provisioner = world.provisioner()
    world.clock.now = T0 + 100 - LEAD
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.INSTALLED and world.carries()
    assert _select_buckets(world) == 2  # the first step: the two paths without l23
    world.clock.now = T0 + 149
    assert provisioner.step(world.clock.now).next_change == T0 + 150
    world.clock.now = T0 + 150
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.INSTALLED and world.carries()
    assert _select_buckets(world) == 3  # all three from the step on
    world.clock.now = T0 + 200
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.REMOVED and world.braid_tables() == {}


def test_cancel_of_a_volume_takes_its_rules_out() -> None:
    world = World()
    rid = _book_volume(world)
    provisioner = world.provisioner()
    world.clock.now = T0 + 100
    provisioner.step(world.clock.now)
    assert world.carries()
    world.service.cancel(ALICE, rid)
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.REMOVED and world.braid_tables() == {}


def test_a_modified_volume_changes_the_step_in_force_without_a_gap() -> None:
    world = World()
    world.book(src="s2", bw=1000, start=100, end=150)
    rid = _book_volume(world)
    provisioner = world.provisioner()
    world.clock.now = T0 + 120
    provisioner.step(world.clock.now)
    assert _select_buckets(world) == 2 and world.carries()
    # The rest at 1 Gbit/s at most: one path carries it from now on.
    change = Modify.parse({"max_rate": "1G", "deadline": format_instant(T0 + 900)})
    changed = world.service.modify(ALICE, rid, change).record
    assert changed.end > T0 + 200
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.INSTALLED and world.carries()
    assert _select_buckets(world) == 1
    world.clock.now = changed.end
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.REMOVED and world.braid_tables() == {}
