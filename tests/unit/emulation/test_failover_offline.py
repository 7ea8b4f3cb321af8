"""`braid emulate failover`'s pure parts: probe-stream timing, the report, its figures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from braid.adapters.emulation.probe import ProbeTrace
from braid.core.errors import InputError
from braid.core.impulse import EventMarks, ImpulseSettings, Trace, analyze
from braid.emulation.experiments.failover import check_options, configurations
from braid.emulation.failover.config import Config, ConfigResult, FailoverOptions
from braid.emulation.failover.measure import moved_back, moved_early, outage_ms, through_after
from braid.emulation.failover.report import failover_report
from braid.emulation.plots import PLOTTERS


def _stream(delays_ms: list[float], lost: frozenset[int] = frozenset()) -> ProbeTrace:
    """One packet a millisecond from t = 0, each with its one-way delay."""
    arrivals = tuple(
        (k, k / 1000, k / 1000 + d / 1000) for k, d in enumerate(delays_ms) if k not in lost
    )
    return ProbeTrace(len(delays_ms), 0.0, 1000, arrivals)


def test_traffic_moves_back_after_the_last_slow_packet() -> None:
    # fast until 100 ms, slow (80 ms) for 150 ms, fast again from 250 ms; a second event at 1 s
    # whose traffic never went slow
    delays = [4.0] * 100 + [80.0] * 150 + [4.0] * 1750
    moved = moved_back(_stream(delays), [0.1, 1.0], split_ms=40, within=0.5)
    assert moved[0] is not None and abs(moved[0] - 0.15) < 1e-9
    assert moved[1] is None


def test_after_a_cut_the_first_packet_through_took_the_other_path() -> None:
    # a cut at 0.1 s: nothing sent from 0.1 s arrives until 0.23 s; a second cut at 1.0 s
    # that nothing ever got round (lost to the end of the stream)
    trace = _stream([4.0] * 2000, lost=frozenset(range(100, 230)) | frozenset(range(1000, 2000)))
    moved = through_after(trace, [0.1, 1.0], within=0.5)
    assert moved[0] is not None and abs(moved[0] - 0.13) < 1e-9
    assert moved[1] is None
    # already through at the event (a site that had moved before): zero
    assert through_after(trace, [0.05], within=0.5) == [0.0]


def test_a_fail_over_between_the_put_back_and_the_event_found_the_site_moved() -> None:
    # events at 10, 20, 30 s, sites put back 5 s after each; fail-overs at 10.1 (the
    # first event's), 16 (after the put-back at 15: early for the event at 20), 25.5 (after
    # the put-back at 25: early for 30), and one at 3 s, before the first event
    early = moved_early([3.0, 10.1, 16.0, 25.5], [10.0, 20.0, 30.0], put_back=5.0)
    assert early == [True, True, True]
    assert moved_early([10.1, 20.2, 30.05], [10.0, 20.0, 30.0], put_back=5.0) == [False] * 3


def test_longest_gap_in_the_stream() -> None:
    trace = _stream([4.0] * 1000, lost=frozenset(range(500, 512)) | {700})
    assert outage_ms(trace, 0.4, 0.8) == 12.0
    assert outage_ms(trace, 0.0, 0.4) == 0.0


def test_short_mode_is_the_seeds_train_with_both_methods() -> None:
    short = FailoverOptions.short()
    assert (short.period, short.events) == (10.0, 3)
    assert [c.label for c in configurations(short)] == [
        "direct, path-switch",
        "controller, path-switch",
    ]
    full = FailoverOptions()
    assert (full.period, full.events) == (50.0, 10)
    assert Config("direct", "path-switch", 100) in configurations(full)
    assert len(configurations(full)) == 6


def test_groups_meet_only_the_cut_and_monitors_every_degradation() -> None:
    options = FailoverOptions(
        methods=("direct", "ff", "ff-bfd"), degradations=("path-switch", "cut"), extra=()
    )
    assert [c.label for c in configurations(options)] == [
        "direct, path-switch",
        "direct, cut",
        "ff, cut",
        "ff-bfd, cut",
    ]
    check_options(options)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"methods": ("direct", "ff-bfd"), "degradations": ("path-switch",)}, "--methods"),
        ({"bfd_ms": 0}, "--bfd-interval"),
        ({"bfd_ms": 120_000}, "--bfd-interval"),
    ],
)
def test_options_that_cannot_run_are_refused_naming_the_option(
    changes: dict[str, object], field: str
) -> None:
    options = replace(FailoverOptions(degradations=("cut",)), **changes)  # type: ignore[arg-type]
    with pytest.raises(InputError) as caught:
        check_options(options)
    assert caught.value.field == field


def _result(config: Config, slow: float) -> ConfigResult:
    """A hand-made run: TCP at 100 Mbit/s, at zero for `slow` seconds after each event."""
    times = [k / 10 for k in range(400)]
    events = [3.0, 13.0, 23.0]
    rates = [0.0 if any(e <= t < e + slow for e in events) else 1e8 for t in times]
    trace = Trace.of(times, rates)
    marks = [EventMarks(e, e + 0.1, e + 0.12) for e in events]
    analysis = analyze(trace, marks, ImpulseSettings(period=10, step=0.1, lead=1, pre=1),
                       np.random.default_rng(1))  # fmt: skip
    return ConfigResult(
        config, 0.0, events, trace, analysis, [20.0, 25.0, 30.0], [0.2, 0.25, None],
        {"A": 3, "B": 4},
    )  # fmt: skip


def test_report_floors_and_figures_from_a_hand_made_run(tmp_path: Path) -> None:
    results = [
        _result(Config("direct", "path-switch"), 0.3),
        _result(Config("controller", "path-switch"), 0.5),
        _result(Config("direct", "path-switch", 100), 0.4),
    ]
    options = FailoverOptions(events=3, period=10)
    report = failover_report(results, 12.0, options, ["a note"])
    direct = report.rows[0]
    assert direct["rules_ms"] == 25.0 and direct["moved_ms"] == 225.0
    assert direct["recovery_s"] is not None and abs(direct["recovery_s"] - 0.3) < 1e-9
    floors = {f.name: f for f in report.floors}
    assert all(f.at_most for f in floors.values())
    assert floors["direct: detection → rules in, median"].passed
    assert floors["fast-failover group, link down: longest probe gap"].value == 12.0
    comparison = report.series["comparisons"]["path-switch"]
    assert [round(d, 6) for d in comparison["relative_delays_s"]] == [0.2, 0.2, 0.2]
    assert any("more actions than degradations" in f for f in report.findings)
    written = [p.name for plot in PLOTTERS["failover"] for p in plot(report, tmp_path)]
    assert written == [
        "failover-traces.png", "failover-traces.pdf",
        "failover-impulse-path-switch.png", "failover-impulse-path-switch.pdf",
        "failover-extra-flows.png", "failover-extra-flows.pdf",
    ]  # fmt: skip


def test_the_report_says_what_each_method_made_of_a_cut() -> None:
    results = [
        _result(Config("ff", "cut"), 0.6),
        _result(Config("ff-bfd", "cut"), 0.2),
    ]
    results[0].moved_s = [None, None, None]
    results[1].moved_s = [0.12, 0.15, 0.13]
    report = failover_report(results, 3.0, FailoverOptions(events=3, period=10), [])
    assert [r["moved_ms"] for r in report.rows] == [None, 130.0]
    cut = [f for f in report.findings if "cut → traffic on the standby" in f]
    assert cut[0].startswith("ff, cut: cut → traffic on the standby in 0 of 3 events")
    assert cut[1].startswith("ff-bfd, cut: cut → traffic on the standby in 3 of 3 events")
    assert "120, 150, 130" in cut[1]


def test_events_a_site_met_already_failed_over_are_left_out_of_the_medians() -> None:
    result = _result(Config("direct", "cut"), 0.3)
    result.moved_s = [0.2, 0.001, 0.3]
    result.early = [False, True, False]
    report = failover_report([result], None, FailoverOptions(events=3, period=10), [])
    row = report.rows[0]
    assert row["early_events"] == [1] and row["moved_ms"] == 250.0
    assert row["moved_ms_per_event"] == [200.0, 1.0, 300.0]  # every event is still shown
    assert any("before event(s) 2 came" in f for f in report.findings)
