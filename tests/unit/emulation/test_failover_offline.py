"""`braid emulate failover`'s pure parts: probe-stream timing, the report, its figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from braid.adapters.emulation.probe import ProbeTrace
from braid.core.impulse import EventMarks, ImpulseSettings, Trace, analyze
from braid.emulation.experiments.failover import (
    Config,
    ConfigResult,
    FailoverOptions,
    configurations,
)
from braid.emulation.failover_measure import moved_back, outage_ms
from braid.emulation.failover_report import failover_report
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
