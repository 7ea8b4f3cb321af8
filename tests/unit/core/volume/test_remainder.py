"""Re-planning a booked volume's remainder: the past kept, the rest planned anew."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from braid.core.model.network import Network
from braid.core.model.topology import topology_from_dict
from braid.core.planning.invariants import overbooking
from braid.core.volume import (
    Profile,
    VolumeAsk,
    VolumePlan,
    VolumeRefusal,
    moved_before,
    plan_volume,
    replan_remainder,
)
from tests.unit.core.netgen import HORIZON, loaded_networks
from tests.unit.core.volume.test_plan import asks


def book(network: Network, reservation_id: str, profile: Profile, symmetric: bool) -> None:
    for step in profile.bookings(reservation_id, symmetric=symmetric):
        network.commit(step)


def release(network: Network, reservation_id: str, profile: Profile) -> None:
    for index in range(len(profile.steps)):
        network.release(f"{reservation_id}~{index}")


@st.composite
def changes(draw: st.DrawFn, ask: VolumeAsk, now: int, done: int) -> VolumeAsk:
    """`ask` with some of a new volume (more than has moved), deadline, cap and objective."""
    start = max(now, ask.not_before)
    return replace(
        ask,
        bits=draw(st.integers(done + 1, done + 250)),
        deadline=draw(st.integers(start + 1, HORIZON + 20)),
        max_rate=draw(st.none() | st.integers(1, 12)),
        objective=draw(st.sampled_from(["earliest", "flattest"])),
    )


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_a_replan_keeps_the_past_moves_the_new_volume_and_never_overbooks(
    net: Network, data: Any
) -> None:
    ask = data.draw(asks(net))
    first = plan_volume(net, ask)
    assume(isinstance(first, VolumePlan))
    assert isinstance(first, VolumePlan)
    old = first.profile
    book(net, "v", old, ask.symmetric)
    now = data.draw(st.integers(ask.not_before, old.end), label="now")
    kept = moved_before(old, now)
    done = sum(step.bits for step in kept)
    new_ask = data.draw(changes(ask, now, done))
    release(net, "v", old)
    answer = replan_remainder(net, new_ask, old, now)
    if isinstance(answer, VolumeRefusal):
        assert done <= answer.most_by_deadline < new_ask.bits
        assert new_ask.deadline is not None
        completion = answer.earliest_completion
        assert completion is None or completion > new_ask.deadline
        book(net, "v", old, ask.symmetric)  # nothing changes: the old profile still fits
        assert overbooking(net) == []
        return
    new = answer.profile
    assert moved_before(new, now) == kept
    assert new_ask.bits <= new.bits < new_ask.bits + new.steps[-1].rate
    assert new.end <= (new_ask.deadline or new.end)
    for step in new.steps[len(kept) :]:  # (a kept step may run on: then its rates are new)
        assert step.start >= now and 0 < len(step.allocations) <= new_ask.max_paths
        assert new_ask.max_rate is None or step.rate <= new_ask.max_rate
    book(net, "v", new, ask.symmetric)
    assert overbooking(net) == []


# A -> B over one 10 Mbit/s link: one path, its rate the free capacity.
M = 10**6
LINE = topology_from_dict(
    {
        "nodes": [{"id": "A"}, {"id": "B"}],
        "links": [{"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1}],
    }
)
T0 = 1_800_000_000


def test_the_step_in_force_is_cut_at_now_and_the_rest_replanned() -> None:
    net = Network(LINE)
    ask = VolumeAsk("A", "B", 1000 * M, T0, T0 + 1000, max_rate=5 * M)
    first = plan_volume(net, ask)
    assert isinstance(first, VolumePlan)
    assert [(s.start, s.end, s.rate // M) for s in first.profile.steps] == [(T0, T0 + 200, 5)]
    # 60 s in, 300 Mbit moved: 700 more, now at up to 10 Mbit/s.
    answer = replan_remainder(net, replace(ask, max_rate=None), first.profile, T0 + 60)
    assert isinstance(answer, VolumePlan)
    steps = [(s.start, s.end, s.rate // M) for s in answer.profile.steps]
    assert steps == [(T0, T0 + 60, 5), (T0 + 60, T0 + 130, 10)]


def test_an_unchanged_remainder_merges_back_into_the_step_in_force() -> None:
    net = Network(LINE)
    ask = VolumeAsk("A", "B", 1000 * M, T0, T0 + 1000, max_rate=5 * M)
    first = plan_volume(net, ask)
    assert isinstance(first, VolumePlan)
    again = replan_remainder(net, ask, first.profile, T0 + 60)
    assert again == first


def test_a_refusal_counts_what_moved_and_says_so() -> None:
    net = Network(LINE)
    ask = VolumeAsk("A", "B", 1000 * M, T0, T0 + 1000, max_rate=5 * M)
    first = plan_volume(net, ask)
    assert isinstance(first, VolumePlan)
    # 300 Mbit moved by T0 + 60; 10 Mbit/s for 40 s more is 400: 700 of the 8000 asked.
    answer = replan_remainder(
        net, replace(ask, bits=8000 * M, deadline=T0 + 100, max_rate=None), first.profile, T0 + 60
    )
    assert isinstance(answer, VolumeRefusal)
    assert answer.most_by_deadline == 700 * M
    assert answer.earliest_completion == T0 + 60 + 770
    assert "(37.5 MB of it moved already)" in answer.reason


def test_a_deadline_already_past_is_refused_with_the_earliest_completion() -> None:
    net = Network(LINE)
    ask = VolumeAsk("A", "B", 1000 * M, T0, T0 + 1000, max_rate=5 * M)
    first = plan_volume(net, ask)
    assert isinstance(first, VolumePlan)
    answer = replan_remainder(net, replace(ask, deadline=T0 + 50), first.profile, T0 + 60)
    assert isinstance(answer, VolumeRefusal)
    assert answer.most_by_deadline == 300 * M and answer.earliest_completion == T0 + 60 + 140


def test_when_all_has_moved_only_the_past_is_left() -> None:
    net = Network(LINE)
    ask = VolumeAsk("A", "B", 1000 * M, T0, T0 + 1000, max_rate=5 * M)
    first = plan_volume(net, ask)
    assert isinstance(first, VolumePlan)
    answer = replan_remainder(net, replace(ask, bits=200 * M), first.profile, T0 + 60)
    assert isinstance(answer, VolumePlan)
    assert [(s.start, s.end) for s in answer.profile.steps] == [(T0, T0 + 60)]
