"""The success-rate study's pure parts: workload, calibration, judging, counting."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.negotiation.strategies import equal_amounts
from braid.studies.success_rate.evaluate import SIM_STRATEGIES, judge, visible_count
from braid.studies.success_rate.sim import PAPER_FIGURES, repetition_counts, summarize
from braid.studies.success_rate.workload import (
    SimConfig,
    SimRequest,
    calibrate_scale,
    draw_demands,
    draw_schedules,
)

SimCase = tuple[np.ndarray, SimRequest, int, int]  # schedules, request, k, slack
SMALL = SimConfig(entries=60, requests=20, repetitions=3, calibration_requests=400)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=4))
def test_a_repetition_depends_only_on_its_seed(seed: list[int]) -> None:
    scale = 6_000_000_000
    assert repetition_counts(SMALL, scale, seed) == repetition_counts(SMALL, scale, seed)


def test_different_seeds_draw_different_workloads() -> None:
    runs = {repetition_counts(SMALL, 6_000_000_000, [s]) for s in range(5)}
    assert len(runs) > 1


def test_workload_stays_inside_the_schedule() -> None:
    config = SimConfig(entries=30, max_duration=7)
    rng = np.random.default_rng(3)
    schedules = draw_schedules(rng, config)
    assert schedules.shape == (4, 30)
    assert schedules.min() >= 0 and schedules.max() <= config.capacity
    demands = draw_demands(rng, config, 500)
    assert (demands.starts >= 0).all()
    assert (demands.starts + demands.durations <= 30).all()
    assert set(demands.durations.tolist()) <= set(range(1, 8))
    for request in demands.scaled(10**9):
        assert 1 <= request.bandwidth <= 10**9


def test_one_entry_windows_calibrate_to_about_the_capacity() -> None:
    # Free ~ U(0, C) and demand ~ U(0, s) with one-entry windows: half fit iff s = C.
    config = SimConfig(max_duration=1)
    scale = calibrate_scale(np.random.default_rng(7), config)
    assert abs(scale - config.capacity) < 0.05 * config.capacity


def test_longer_windows_calibrate_to_smaller_requests() -> None:
    short = calibrate_scale(np.random.default_rng(7), SimConfig(max_duration=1))
    long = calibrate_scale(np.random.default_rng(7), SimConfig(max_duration=8))
    assert long < short


def test_calibrated_single_domain_success_is_near_the_target() -> None:
    config = SimConfig(max_duration=4)
    rng = np.random.default_rng(11)
    scale = calibrate_scale(rng, config)
    fits: list[float] = []
    for _ in range(10):
        schedules = draw_schedules(rng, config)
        requests = draw_demands(rng, config, 300).scaled(scale)
        fits.extend(judge("full-offers", schedules, r, 1, 0) for r in requests)
    assert abs(sum(fits) / len(fits) - 0.5) < 0.04


@st.composite
def workloads(draw: st.DrawFn) -> SimCase:
    entries = draw(st.integers(1, 8))
    k = draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(st.integers(0, 20), min_size=entries, max_size=entries),
                         min_size=4, max_size=4))  # fmt: skip
    duration = draw(st.integers(1, entries))
    start = draw(st.integers(0, entries - duration))
    request = SimRequest(start, duration, draw(st.integers(1, 50)))
    return np.array(rows, dtype=np.int64), request, k, draw(st.integers(0, 3))


@settings(max_examples=300)
@given(workloads())
def test_strategies_are_ordered_as_documented(
    case: SimCase,
) -> None:
    schedules, request, k, slack = case
    ok = {s: judge(s, schedules, request, k, slack) for s in SIM_STRATEGIES}
    assert ok["equal-split"] <= ok["partial-offers"] <= ok["full-offers"]
    assert ok["full-offers"] <= ok["max-flow"] <= ok["flex-max-flow"]
    assert ok["full-offers"] <= ok["flex"] <= ok["flex-max-flow"]


@settings(max_examples=200)
@given(workloads())
def test_full_offers_and_max_flow_match_their_definitions(
    case: SimCase,
) -> None:
    schedules, request, k, _ = case
    window = schedules[:k, request.start : request.start + request.duration]
    assert judge("full-offers", schedules, request, k, 0) == (
        window.min(axis=1).sum() >= request.bandwidth
    )
    assert judge("max-flow", schedules, request, k, 0) == (
        window.sum(axis=0).min() >= request.bandwidth
    )
    parts = equal_amounts(request.bandwidth, k)
    assert judge("equal-split", schedules, request, k, 0) == all(
        int(free) >= part for free, part in zip(window.min(axis=1), parts, strict=True)
    )


def test_half_the_domains_are_visible_under_partial_offers() -> None:
    assert [visible_count("partial-offers", k) for k in (1, 2, 3, 4)] == [0, 1, 1, 2]
    assert visible_count("equal-split", 4) == 0 and visible_count("full-offers", 4) == 4


def test_paper_figures_line_up_with_ours() -> None:
    config = SimConfig(requests=10, repetitions=2)
    counts = [repetition_counts(config, 10**10, [rep]) for rep in range(2)]
    ours = summarize(config, counts).ours()
    assert list(ours) == list(PAPER_FIGURES)
    assert all(0.0 <= v <= 100.0 for v in ours.values())


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"entries": 0}, "entries"),
        ({"max_duration": 2000}, "max_duration"),
        ({"slack": -1}, "slack"),
        ({"target_single": 1.0}, "target_single"),
        ({"repetitions": 0}, "repetitions"),
    ],
)
def test_bad_config_names_the_parameter(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        SimConfig(**changes).check()  # type: ignore[arg-type]
    assert info.value.field == field


def test_one_entry_windows_match_the_closed_forms() -> None:
    # Free ~ U(0, C), demand ~ U(0, C), one entry: full offers over k domains
    # succeed with 1 - 1/(k+1)!, equal splitting over two with 7/12.
    config = SimConfig(max_duration=1)
    rng = np.random.default_rng(21)
    granted = {"full2": 0, "full4": 0, "equal2": 0}
    total = 0
    for _ in range(10):
        schedules = draw_schedules(rng, config)
        for request in draw_demands(rng, config, 300).scaled(config.capacity):
            total += 1
            granted["full2"] += judge("full-offers", schedules, request, 2, 0)
            granted["full4"] += judge("full-offers", schedules, request, 4, 0)
            granted["equal2"] += judge("equal-split", schedules, request, 2, 0)
    assert abs(granted["full2"] / total - 5 / 6) < 0.03
    assert abs(granted["full4"] / total - 119 / 120) < 0.01
    assert abs(granted["equal2"] / total - 7 / 12) < 0.035
