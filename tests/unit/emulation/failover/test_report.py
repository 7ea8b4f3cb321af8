"""`braid emulate failover`'s report (table, floors, findings) and figures, from hand-made runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from braid.core.impulse import EventMarks, ImpulseSettings, Trace, analyze
from braid.emulation.failover.config import Config, ConfigResult, FailoverOptions
from braid.emulation.failover.report import failover_report
from braid.emulation.plots import PLOTTERS


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
