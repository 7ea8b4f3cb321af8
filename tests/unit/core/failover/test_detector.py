"""The monitor's trigger policy, fed by hand and by a two-site simulation."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.failover import (
    ActionDone,
    Decision,
    Detected,
    DetectionRule,
    MonitorState,
    RateSample,
    Recovered,
    RttSample,
    Switch,
    TargetBack,
    TargetLost,
    start,
    step,
)
from braid.core.failover.detector import Sample

RULE = DetectionRule(rtt_threshold_ms=50, rtt_samples=3, recover_samples=2, hold_down_s=0.0)


def feed(
    rule: DetectionRule, samples: Iterable[Sample], state: MonitorState | None = None
) -> tuple[MonitorState, list[Decision]]:
    state = start(rule) if state is None else state
    seen: list[Decision] = []
    for sample in samples:
        state, out = step(state, rule, sample)
        seen.extend(out)
    return state, seen


def probes(rtts: Iterable[float | None], t0: float = 0.0, dt: float = 0.1) -> list[RttSample]:
    return [RttSample(t0 + k * dt, t0 + k * dt, r) for k, r in enumerate(rtts)]


def test_k_probes_over_the_threshold_fire_once() -> None:
    state, seen = feed(RULE, probes([5, 60, 70, 5, 60, 61, 62, 63, 64]))
    assert seen == [Detected(0.6000000000000001, "rtt", 62), Switch(0.6000000000000001, "standby")]
    assert state.phase == "switching"


def test_after_the_switch_older_probes_are_ignored_and_good_ones_recover() -> None:
    rule = DetectionRule(rtt_samples=1, recover_samples=2, hold_down_s=0.0)
    state, seen = feed(rule, probes([5, 80]))
    assert isinstance(seen[-1], Switch)
    state, _ = step(state, rule, ActionDone(0.15, "standby", ok=True))
    assert state.path == "standby"
    # sent before the rules went in: says nothing about the new path
    state, late = feed(rule, [RttSample(0.3, 0.12, 90)], state)
    assert late == [] and state.phase == "failed-over"
    state, back = feed(rule, probes([20, 20], t0=0.2), state)
    assert back == [Recovered(0.30000000000000004, "standby")]
    _, again = feed(rule, probes([90], t0=1.0), state)
    assert again[-1] == Switch(1.0, "standby")  # fixed mode: always the standby


def test_still_degraded_long_after_a_switch_acts_again() -> None:
    rule = DetectionRule(rtt_samples=1, recover_samples=3, hold_down_s=0.0, retry_s=1.0)
    state, _ = feed(rule, probes([5, 90]))
    state, _ = step(state, rule, ActionDone(0.15, "standby", ok=True))
    state, seen = feed(rule, probes([90] * 9, t0=0.2), state)  # up to 1.0 s: within retry_s
    assert seen == []
    state, seen = feed(rule, probes([90], t0=1.2), state)
    assert seen == [Detected(1.2, "rtt", 90), Switch(1.2, "standby")]


def test_alternate_mode_moves_to_the_next_path_each_time() -> None:
    rule = DetectionRule(rtt_samples=1, recover_samples=1, hold_down_s=0.0, alternate=True)
    state, seen = feed(rule, probes([5, 90]))
    state, _ = step(state, rule, ActionDone(0.2, "standby", ok=True))
    state, seen = feed(rule, probes([5, 90], t0=1.0), state)
    assert seen[-1] == Switch(1.1, "primary")


def test_a_failed_action_lets_the_next_probes_try_again() -> None:
    rule = DetectionRule(rtt_samples=1, hold_down_s=0.0)
    state, _ = feed(rule, probes([5, 90]))
    state, _ = step(state, rule, ActionDone(0.2, "standby", ok=False))
    assert state.path == "primary" and state.phase == "watching"
    _, seen = feed(rule, probes([90], t0=0.3), state)
    assert isinstance(seen[-1], Switch)


def test_lost_probes_count_as_over_and_a_silent_target_is_reported_once() -> None:
    rule = DetectionRule(rtt_samples=2, lost_after_s=1.0, hold_down_s=0.0)
    state, seen = feed(rule, probes([5, None, None]))
    assert [type(d) for d in seen] == [Detected, Switch]
    state, _ = step(state, rule, ActionDone(0.25, "standby", ok=True))
    state, seen = feed(rule, probes([None] * 20, t0=0.3), state)
    assert [type(d) for d in seen] == [TargetLost]
    assert state.lost
    _, seen = feed(rule, probes([4], t0=3.0), state)
    assert seen == [TargetBack(3.0)]


def test_late_probes_are_over_the_threshold_but_no_sign_of_life() -> None:
    rule = DetectionRule(rtt_samples=2, lost_after_s=0.35, hold_down_s=0.0)
    late = [RttSample(0.1 * k + 0.05, 0.1 * k, 50.0, late=True) for k in range(1, 6)]
    _, seen = feed(rule, [RttSample(0.0, 0.0, 5.0), *late])
    assert [type(d) for d in seen] == [Detected, Switch, TargetLost]


def test_a_target_that_never_answered_fires_nothing_and_is_reported_lost() -> None:
    rule = DetectionRule(rtt_samples=1, lost_after_s=0.5)
    _, seen = feed(rule, probes([None] * 30))
    assert seen == [TargetLost(0.5, 0.5)]


def test_loss_over_the_window() -> None:
    rule = DetectionRule(rtt_samples=100, loss_percent=30, loss_window=10)
    _, seen = feed(rule, probes([5, 5, None, 5, None, 5, 5, None, 5, 5]))
    assert seen[0] == Detected(0.9, "loss", 30.0)


def test_throughput_under_the_floor_once_it_was_above() -> None:
    rule = DetectionRule(throughput_floor_bps=1e6, throughput_samples=2)
    rates = [RateSample(t, bps) for t, bps in ((0, 0), (1, 0), (2, 5e6), (3, 1e5), (4, 2e5))]
    _, seen = feed(rule, rates)
    assert seen == [Detected(4, "throughput", 2e5), Switch(4, "standby")]


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        (DetectionRule(rtt_threshold_ms=0), "rtt_threshold_ms"),
        (DetectionRule(rtt_samples=0), "rtt_samples"),
        (DetectionRule(loss_percent=120), "loss_percent"),
        (DetectionRule(throughput_floor_bps=-1), "throughput_floor_bps"),
        (DetectionRule(lost_after_s=float("nan")), "lost_after_s"),
        (DetectionRule(paths=("a", "a")), "paths"),
    ],
)
def test_rules_out_of_range_name_the_field(rule: DetectionRule, field: str) -> None:
    with pytest.raises(InputError) as caught:
        start(rule)
    assert caught.value.field == field


def test_two_sites_agree_only_through_what_they_measure() -> None:
    """A's monitor switches first; B still sends on the slow primary, so A's RTT stays high
    until B's own monitor switches too. Each fires once; both end on the standby."""
    one_way = {"primary": 100.0, "standby": 20.0}  # the primary's delay was just raised
    rule = DetectionRule(rtt_threshold_ms=60, rtt_samples=2, recover_samples=3, hold_down_s=0.0)
    states = {"A": start(rule), "B": start(rule)}
    states = {s: MonitorState(path="primary", answered_at=0.0) for s in states}
    delay = {"A": 0.05, "B": 0.35}  # how long each site's action takes
    pending: dict[str, tuple[float, str]] = {}
    switches: dict[str, int] = {"A": 0, "B": 0}
    for k in range(60):
        t = k * 0.1
        for site, other in (("A", "B"), ("B", "A")):
            if site in pending and pending[site][0] <= t:
                states[site], _ = step(states[site], rule, ActionDone(t, pending[site][1], True))
                del pending[site]
            rtt = one_way[states[site].path] + one_way[states[other].path]
            states[site], out = step(states[site], rule, RttSample(t, t, rtt))
            for decision in out:
                if isinstance(decision, Switch):
                    switches[site] += 1
                    pending[site] = (t + delay[site], decision.to)
    assert switches == {"A": 1, "B": 1}
    assert states["A"].path == states["B"].path == "standby"
    assert states["A"].phase == states["B"].phase == "watching"


samples = st.lists(
    st.one_of(
        st.none(),
        st.floats(min_value=0, max_value=200),
    ),
    max_size=80,
)


@settings(max_examples=100, deadline=None)
@given(samples, st.integers(min_value=1, max_value=4))
def test_never_two_switches_without_an_action_and_a_recovery_between(
    rtts: list[float | None], k: int
) -> None:
    rule = DetectionRule(rtt_samples=k, recover_samples=2, lost_after_s=0.5, hold_down_s=0.0)
    state = start(rule)
    waiting_for = None
    for sample in probes(rtts):
        state, out = step(state, rule, sample)
        for decision in out:
            if isinstance(decision, Switch):
                assert waiting_for is None, "a second switch before the first was done"
                assert not state.lost
                waiting_for = decision
        if waiting_for is not None:
            state, _ = step(state, rule, ActionDone(sample.t, waiting_for.to, ok=True))
            waiting_for = None
        assert state.phase in ("watching", "failed-over")
