"""Properties of volume plans on random small networks with random bookings."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.network import Network
from braid.core.planning.invariants import overbooking
from braid.core.volume import VolumeAsk, VolumePlan, VolumeRefusal, plan_volume, quickest_transfer
from braid.core.volume.rates import Rates
from braid.core.volume.sweep import Sweep
from tests.unit.core.multipath.nets import network
from tests.unit.core.netgen import HORIZON, loaded_networks


def copy_of(network: Network) -> Network:
    copy = Network(network.topology)
    for booking in network.bookings.values():
        copy.commit(booking)
    return copy


@st.composite
def asks(draw: st.DrawFn, network: Network) -> VolumeAsk:
    src, dst = draw(st.permutations(sorted(network.topology.nodes)))[:2]
    not_before = draw(st.integers(0, HORIZON - 1))
    deadline = draw(st.integers(not_before + 1, HORIZON + 10))
    return VolumeAsk(
        src,
        dst,
        draw(st.integers(1, 200)),
        not_before,
        deadline,
        max_rate=draw(st.none() | st.integers(1, 12)),
        max_paths=draw(st.integers(1, 4)),
        objective=draw(st.sampled_from(["earliest", "flattest"])),
        symmetric=draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_a_plan_fits_moves_the_volume_in_time_within_its_caps(net: Network, data: Any) -> None:
    ask = data.draw(asks(net))
    answer = plan_volume(net, ask)
    if isinstance(answer, VolumeRefusal):
        assert answer.most_by_deadline < ask.bits
        assert answer.earliest_completion is None or answer.earliest_completion > ask.deadline
        return
    profile = answer.profile
    assert ask.bits <= profile.bits < ask.bits + profile.steps[-1].rate
    assert ask.not_before <= profile.start and profile.end <= (ask.deadline or profile.end)
    for step in profile.steps:
        assert 0 < len(step.allocations) <= ask.max_paths
        assert ask.max_rate is None or step.rate <= ask.max_rate
        assert all(a.bandwidth > 0 for a in step.allocations)
    copy = copy_of(net)
    for booking in profile.bookings("v", symmetric=ask.symmetric):
        copy.commit(booking)  # raises if any step overbooks
    assert overbooking(copy) == []


def moved_by_deadline(net: Network, ask: VolumeAsk, peak: int | None) -> int:
    """Sum of min(rate, peak) * length over the pieces before the deadline (from the rates)."""
    free: dict[Any, int] = {}
    rates = Rates(net, ask, free)
    sweep = Sweep(net, rates.links, ask.not_before, ask.symmetric)
    sweep.free = free
    total = 0
    assert ask.deadline is not None
    for start, end, changed in sweep.pieces():
        if start >= ask.deadline:
            break
        rate = rates.rate(start, end, changed).total
        total += (rate if peak is None else min(rate, peak)) * (min(end, ask.deadline) - start)
    return total


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_the_flattest_peak_is_least_and_no_higher_than_the_earliest(
    net: Network, data: Any
) -> None:
    ask = data.draw(asks(net))
    flat = plan_volume(net, VolumeAsk(**{**_fields(ask), "objective": "flattest"}))
    early = plan_volume(net, VolumeAsk(**{**_fields(ask), "objective": "earliest"}))
    assert isinstance(flat, VolumePlan) == isinstance(early, VolumePlan)
    if isinstance(flat, VolumePlan) and isinstance(early, VolumePlan):
        assert flat.profile.peak <= early.profile.peak
        assert early.completion <= flat.completion
        assert moved_by_deadline(net, ask, flat.profile.peak) >= ask.bits
        assert moved_by_deadline(net, ask, flat.profile.peak - 1) < ask.bits


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.data())
def test_quickest_is_the_earliest_without_a_deadline(net: Network, data: Any) -> None:
    ask = data.draw(asks(net))
    quickest = quickest_transfer(net, ask)
    open_ended = plan_volume(
        net, VolumeAsk(**{**_fields(ask), "deadline": None, "objective": "earliest"})
    )
    if quickest is None:
        assert isinstance(open_ended, VolumeRefusal) and open_ended.earliest_completion is None
    else:
        assert isinstance(open_ended, VolumePlan) and open_ended.completion == quickest.completion


def _fields(ask: VolumeAsk) -> dict[str, Any]:
    return {name: getattr(ask, name) for name in VolumeAsk.__dataclass_fields__}


def test_nonsense_is_a_value_error() -> None:
    net = network([("l", "A", "B", 100, 1)])
    src, dst = "A", "B"
    for ask in (
        VolumeAsk(src, dst, 10, 5, 5),
        VolumeAsk(src, dst, 0, 5, 9),
        VolumeAsk(src, dst, 10, 5, None, objective="flattest"),
    ):
        with pytest.raises(ValueError):
            plan_volume(net, ask)
