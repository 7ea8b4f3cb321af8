"""A volume reservation in the store: one record, its profile in `plan`, loads per step."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from braid.app.ports import Change, ConflictError
from braid.app.records import Reservation
from braid.app.reservations.mirror import as_bookings, held_bookings
from braid.app.reservations.volumes import VOLUME_KIND, profile_of, profile_plan, step_loads
from braid.core.model.booking import Allocation
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.planning.lifecycle import State
from braid.core.volume import Profile, Step
from tests.integration.store.conftest import Backend
from tests.integration.store.workload import GBIT, LINKS, PATH, always, capacity_validator

DETOUR = Path(("A", "X", "D"), ("A-X", "X-D"))


def topology() -> Topology:
    """A-B-C-D (the workload's path) and a detour A-X-D, 10 Gbit/s each link."""
    links = [*LINKS, "A-X", "X-D"]
    return topology_from_dict(
        {
            "nodes": [{"id": n} for n in "ABCDX"],
            "links": [
                {"id": k, "a": k[0], "b": k[-1], "capacity": 10_000, "latency_ms": 1} for k in links
            ],
        }
    )


def profile() -> Profile:
    """Both paths, then the main one alone, then (after a gap) the detour at a far time."""
    far = 4_102_444_800  # past 2^31 seconds
    return Profile(
        (
            Step(1_000, 1_500, (Allocation(PATH, 6 * GBIT), Allocation(DETOUR, 3 * GBIT))),
            Step(1_500, 2_000, (Allocation(PATH, 10 * GBIT),)),
            Step(far, far + 7, (Allocation(DETOUR, 1),)),
        )
    )


def volume(rid: str, steps: Profile) -> Reservation:
    return Reservation(
        id=rid,
        token=f"token-{rid}",
        owner="alice",
        state=State.RESERVED,
        src="A",
        dst="D",
        start=steps.start,
        end=steps.end,
        allocations=(),
        kind=VOLUME_KIND,
        request={"mode": "volume", "volume": steps.bytes},
        plan=profile_plan(steps, steps.bytes),
    )


def write(repo: Any, res: Reservation, expected: int | None = None) -> Reservation:
    """Store `res` checked against capacity; with `expected`, as a modification of that version."""
    loads = step_loads(res, topology())
    stored: Reservation = repo.write(
        Change(res, loads),
        validate=capacity_validator(loads),
        now=100,
        actor=res.owner,
        action="created" if expected is None else "modified",
        expected_version=expected,
        counting=always,
    )
    return stored


def test_a_volume_reads_back_as_exactly_its_profile(sql_backend: Backend) -> None:
    steps = profile()
    write(sql_backend.open(), volume("v", steps))
    reopened = sql_backend.open()  # a restart of `braid serve` reads the store afresh
    stored = reopened.get("v")
    assert stored.kind == VOLUME_KIND and (stored.start, stored.end) == (steps.start, steps.end)
    assert profile_of(stored) == steps


def test_each_step_has_its_own_loads_over_its_own_window(repo: Any) -> None:
    res = volume("v", profile())
    write(repo, res)
    loads = Counter(load for rid, load in repo.link_loads() if rid == "v")
    assert loads == Counter(step_loads(res, topology()))
    windows = {(load.start, load.end) for load in loads}
    assert windows == {(s.start, s.end) for s in profile().steps}


def test_the_store_refuses_a_volume_whose_step_would_overbook(repo: Any) -> None:
    write(repo, volume("v", profile()))
    # The main path is full in [1500, 2000): a step there of 1 bit/s does not fit.
    clash = Profile((Step(1_900, 2_100, (Allocation(PATH, 1),)),))
    with pytest.raises(ConflictError):
        write(repo, volume("w", clash))
    assert repo.get("w") is None
    # Where the first volume's steps leave room, it fits.
    fits = Profile((Step(1_000, 1_500, (Allocation(PATH, 4 * GBIT),)),))
    assert write(repo, volume("w", fits)).kind == VOLUME_KIND


def test_a_reloaded_volume_books_every_step_and_is_found_by_its_id() -> None:
    res = volume("v", profile())
    network = Network(topology())
    for booking in as_bookings(res):
        network.commit(booking)
    assert sorted(network.bookings) == ["v~0", "v~1", "v~2"]
    assert [b.start for b in held_bookings(network, "v")] == [s.start for s in profile().steps]
    assert held_bookings(network, "w") == ()
    cancelled = replace(res, state=State.CANCELLED)
    assert profile_of(cancelled) == profile()  # still readable, for the audit and the rules


def test_a_modified_profile_replaces_every_step_load_or_nothing(repo: Any) -> None:
    old = write(repo, volume("v", profile()))
    write(repo, volume("w", Profile((Step(1_000, 1_500, (Allocation(DETOUR, 7 * GBIT),)),))))
    first = profile().steps[0]
    kept = Step(first.start, 1_200, first.allocations)  # what moved before 1200 stays

    def as_modified(*rest: Step) -> Reservation:
        steps = Profile((kept, *rest))
        return replace(old, end=steps.end, plan=profile_plan(steps, steps.bytes))

    def loads_of_v() -> Counter[Any]:
        return Counter(load for rid, load in repo.link_loads() if rid == "v")

    # v's 3 Gbit/s on the detour go with its old steps, but w's 7 and 5 more do not fit.
    with pytest.raises(ConflictError):
        write(repo, as_modified(Step(1_200, 1_800, (Allocation(DETOUR, 5 * GBIT),))), 1)
    assert repo.get("v") == old and loads_of_v() == Counter(step_loads(old, topology()))
    new = as_modified(
        Step(1_200, 1_500, (Allocation(PATH, 10 * GBIT),)),
        Step(1_500, 1_600, (Allocation(DETOUR, 5 * GBIT),)),
    )
    stored = write(repo, new, old.version)
    assert stored.version == old.version + 1 and profile_of(repo.get("v")) == profile_of(new)
    assert loads_of_v() == Counter(step_loads(new, topology()))  # the old steps' rows are gone
    with pytest.raises(ConflictError):  # planned on the version before
        write(repo, old, old.version)
    assert profile_of(repo.get("v")) == profile_of(new)
