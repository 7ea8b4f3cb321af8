"""Volume reservations are left to a later provisioning step: listed as not due, never failed."""

from __future__ import annotations

from dataclasses import replace

from braid.app.ports import Change
from braid.app.provisioning.reservations import ReservationPlans, Wiring
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.volumes import VOLUME_KIND, profile_of, profile_plan
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.model.topology import topology_from_dict
from braid.core.planning.lifecycle import State
from braid.core.rules.model import PortMap
from braid.core.volume import Profile, Step
from tests.integration.store.workload import reservation

TOPOLOGY = topology_from_dict(
    {
        "nodes": [{"id": "A"}, {"id": "D"}],
        "links": [{"id": "A-D", "a": "A", "b": "D", "capacity": 10}],
    }
)


def test_a_volume_is_not_due_and_has_no_plan_but_its_steps_are_readable() -> None:
    repo = MemoryRepository()
    steps = Profile((Step(10, 20, (Allocation(Path(("A", "D"), ("A-D",)), 5),)),))
    volume = replace(
        reservation("v", start=10, end=20, state=State.RESERVED),
        kind=VOLUME_KIND,
        allocations=(),
        plan=profile_plan(steps, steps.bytes),
    )
    repo.write(
        Change(volume, ()), validate=lambda _: [], now=1, actor="a", action="created",
        counting=lambda _: True,
    )  # fmt: skip
    plans = ReservationPlans(repo, Wiring(PortMap({}, {}), {}), lambda: TOPOLOGY)
    assert plans.booked() == []
    assert plans.plan("v") is None
    stored = repo.get("v")
    assert stored is not None and profile_of(stored) == steps
