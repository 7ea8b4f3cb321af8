"""The impulse-response method against hand-made traces whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.impulse import EventMarks, ImpulseSettings, Trace, analyze, compare


def _trace(outage: dict[int, float], length: int = 31, rate: float = 100.0) -> Trace:
    """One sample a second at `rate`, except the seconds given."""
    times = [float(t) for t in range(length)]
    return Trace.of(times, [outage.get(t, rate) for t in range(length)])


# Each event: 2 s at zero, 1 s at half, then back to full.
TWO_EVENTS = _trace({10: 0, 11: 0, 12: 50, 20: 0, 21: 0, 22: 50})
CUT = ImpulseSettings(period=10, step=1, lead=1, pre=2)


def test_each_response_is_what_the_connection_fails_to_carry() -> None:
    result = analyze(TWO_EVENTS, [EventMarks(10), EventMarks(20)], CUT)
    assert result.offsets == (-1, 0, 1, 2, 3, 4, 5, 6, 7, 8)
    expected = (0, 100, 100, 50, 0, 0, 0, 0, 0, 0)
    assert [e.response for e in result.events] == [expected, expected]
    assert result.mean == expected
    assert result.peak == 100


def test_timings_per_event() -> None:
    marks = [EventMarks(10, detected=10.3, switched=10.35), EventMarks(20, detected=20.1)]
    result = analyze(TWO_EVENTS, marks, CUT)
    first, second = result.events
    assert first.pre_rate == 100
    assert first.detect == pytest.approx(0.3)
    assert first.switch == pytest.approx(0.35)
    assert second.switch is None
    assert (first.dip, first.recovery) == (0, 3)
    assert result.median("recovery") == 3
    assert result.median("detect") == pytest.approx(0.2)


def test_a_connection_that_never_recovers_in_the_window() -> None:
    trace = _trace({t: 0 for t in range(10, 31)})
    result = analyze(trace, [EventMarks(10)], ImpulseSettings(period=10, step=1, pre=2, peak=100))
    assert result.events[0].dip == 0
    assert result.events[0].recovery is None


def test_a_degradation_that_only_slows_it_down_a_little_is_not_a_dip() -> None:
    trace = _trace({10: 95, 11: 92})
    result = analyze(trace, [EventMarks(10)], CUT)
    assert result.events[0].dip is None and result.events[0].recovery is None


def test_the_mean_averages_unlike_responses() -> None:
    trace = _trace({10: 0, 20: 0, 21: 0, 22: 0})
    result = analyze(trace, [EventMarks(10), EventMarks(20)], CUT)
    assert result.mean[:5] == (0, 100, 50, 50, 0)
    assert [e.recovery for e in result.events] == [1, 3]


def test_defaults_come_from_the_trace_and_the_events() -> None:
    result = analyze(TWO_EVENTS, [EventMarks(10), EventMarks(20)])
    assert (result.period, result.step, result.lead, result.peak) == (10, 1, 1, 100)


def test_bootstrap_band_is_reproducible_and_holds_the_mean() -> None:
    trace = _trace({10: 0, 20: 0, 21: 0, 22: 0})
    events = [EventMarks(10), EventMarks(20)]
    one = analyze(trace, events, CUT, np.random.default_rng(7))
    two = analyze(trace, events, CUT, np.random.default_rng(7))
    assert one.band_low == two.band_low and one.band_high == two.band_high
    assert one.band_low is not None and one.band_high is not None
    for low, mean, high in zip(one.band_low, one.mean, one.band_high, strict=True):
        assert low <= mean <= high
    assert analyze(trace, events, CUT).band_low is None


@pytest.mark.parametrize(
    ("times", "rates", "field"),
    [
        ([0.0, 2.0, 1.0], [1.0, 1.0, 1.0], "trace.times[2]"),
        ([0.0, 1.0], [1.0], "trace"),
        ([0.0], [1.0], "trace"),
        ([0.0, 1.0], [1.0, -1.0], "trace.rates[1]"),
        ([0.0, float("nan")], [1.0, 1.0], "trace.times[1]"),
    ],
)
def test_bad_traces_name_the_field(times: list[float], rates: list[float], field: str) -> None:
    with pytest.raises(InputError) as caught:
        Trace.of(times, rates)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("events", "options", "field"),
    [
        ([], CUT, "events"),
        ([EventMarks(20), EventMarks(10)], CUT, "events[1].degraded"),
        ([EventMarks(10, detected=9)], CUT, "events[0].detected"),
        ([EventMarks(0.5)], CUT, "events[0]"),
        ([EventMarks(25)], CUT, "events[0]"),
        ([EventMarks(10)], ImpulseSettings(period=-1), "period"),
        ([EventMarks(10)], ImpulseSettings(period=5, step=6), "step"),
        ([EventMarks(10)], ImpulseSettings(period=5, lead=5), "lead"),
        ([EventMarks(10)], ImpulseSettings(period=5, recovered=1.5), "recovered"),
        ([EventMarks(10)], ImpulseSettings(period=5, peak=0), "peak"),
    ],
)
def test_bad_events_and_settings_name_the_field(
    events: list[EventMarks], options: ImpulseSettings, field: str
) -> None:
    with pytest.raises(InputError) as caught:
        analyze(TWO_EVENTS, events, options)
    assert caught.value.field == field


def test_comparison_pairs_events_in_order() -> None:
    fast = analyze(TWO_EVENTS, [EventMarks(10), EventMarks(20)], CUT)
    slow_trace = _trace({10: 0, 11: 0, 12: 0, 13: 0, 20: 0, 21: 0, 22: 0, 23: 0, 24: 0})
    slow = analyze(slow_trace, [EventMarks(10), EventMarks(20)], CUT)
    result = compare(fast, slow, bin_width=1.0)
    assert result.delays == (1, 2)
    assert result.median == 1.5
    assert (result.edges, result.counts) == ((1, 2, 3), (1, 1))
    with pytest.raises(InputError, match="bin_width"):
        compare(fast, slow, bin_width=0)


rates = st.lists(st.floats(min_value=0, max_value=1e9), min_size=40, max_size=80)


@settings(max_examples=50, deadline=None)
@given(rates, st.integers(min_value=1, max_value=4), st.integers(min_value=0, max_value=2**32))
def test_the_mean_and_band_stay_within_the_responses(
    values: list[float], n: int, seed: int
) -> None:
    trace = Trace.of([float(t) for t in range(len(values) + 1)], [*values, 1.0])
    events = [EventMarks(5.0 + 8 * i) for i in range(n) if 5 + 8 * i + 8 <= len(values) - 1]
    result = analyze(
        trace, events, ImpulseSettings(period=8, step=1, lead=1, pre=4), np.random.default_rng(seed)
    )
    assert result.band_low is not None and result.band_high is not None
    for j, mean in enumerate(result.mean):
        column = [e.response[j] for e in result.events]
        assert min(column) - 1e-6 <= result.band_low[j] <= mean + 1e-6
        assert mean - 1e-6 <= result.band_high[j] <= max(column) + 1e-6
        assert all(-1e-6 <= r <= result.peak + 1e-6 for r in column)
    same = compare(result, result, bin_width=0.5)
    assert all(d == 0 for d in same.delays)
    for e in result.events:
        assert e.recovery is None or (e.dip is not None and e.recovery > e.dip)
