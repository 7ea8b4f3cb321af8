"""The step of a volume profile whose rules the switches carry at each moment."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.provisioning.profile_steps import (
    profile_paths,
    step_changes,
    step_in_force,
    step_labels,
)
from braid.core.rules.calendar import Assigned
from braid.core.volume.profile import Profile, Step

PATH = Path(("a", "b"), ("ab",))


def _profile(bounds: list[tuple[int, int]]) -> Profile:
    return Profile(
        tuple(Step(s, e, (Allocation(PATH, 10 + i),)) for i, (s, e) in enumerate(bounds))
    )


def test_lead_gap_and_tail_carry_the_nearest_step_that_is_coming_or_last() -> None:
    profile = _profile([(100, 200), (250, 300)])
    assert [step_in_force(profile, t).start for t in (90, 100, 199, 200, 249, 250, 400)] == [
        100,
        100,
        100,
        250,
        250,
        250,
        250,
    ]
    assert step_changes(profile) == (250,)


@given(st.lists(st.integers(1, 50), min_size=1, max_size=6), st.integers(0, 400))
def test_inside_a_step_that_step_is_in_force(lengths: list[int], now: int) -> None:
    bounds, at = [], 0
    for length in lengths:
        bounds.append((at, at + length))
        at += length + length % 3  # some steps are followed by a gap
    profile = _profile(bounds)
    step = step_in_force(profile, now)
    inside = [s for s in profile.steps if s.start <= now < s.end]
    if inside:
        assert step == inside[0]
    assert step_changes(profile) == tuple(s.start for s in profile.steps[1:])


def test_each_profile_path_keeps_its_one_vlan_in_every_step() -> None:
    other = Path(("a", "c", "b"), ("ac", "cb"))
    profile = Profile(
        (
            Step(0, 10, (Allocation(PATH, 5),)),
            Step(10, 20, (Allocation(other, 5), Allocation(PATH, 3))),
            Step(20, 30, (Allocation(other, 9),)),
        )
    )
    assert profile_paths(profile) == (PATH, other)
    labels = Assigned((101, 102), (7, 8))
    assert [step_labels(profile, labels, s).vlans for s in profile.steps] == [
        (101,),
        (102, 101),
        (102,),
    ]
    assert step_labels(profile, labels, profile.steps[1]).group_ids == (7, 8)
