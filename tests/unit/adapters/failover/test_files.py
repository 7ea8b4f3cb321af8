"""Trace and event files for the impulse-response analysis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from braid.adapters.failover.files import read_events, read_trace
from braid.core.errors import InputError


def test_csv_in_mbps_and_bps(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("time,mbps\n0,10\n1,20\n")
    (tmp_path / "b.csv").write_text("Time,BPS\n0,10\n1,20\n")
    assert read_trace(tmp_path / "a.csv").rates == (10e6, 20e6)
    assert read_trace(tmp_path / "b.csv").rates == (10, 20)


def test_json_lines_and_iperf3(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"t": 1, "bps": 5}\n\n{"t": 2, "bps": 6}\n')
    assert read_trace(tmp_path / "t.jsonl").times == (1, 2)
    iperf = {
        "start": {"timestamp": {"timesecs": 100}},
        "intervals": [{"sum": {"end": e, "bits_per_second": 1e6 * e}} for e in (0.5, 1.0)],
    }
    (tmp_path / "i.json").write_text(json.dumps(iperf))
    trace = read_trace(tmp_path / "i.json")
    assert trace.times == (100.5, 101.0) and trace.rates == (0.5e6, 1e6)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("when,rate\n0,1\n1,2\n", "t.csv"),
        ("time,bps\n0,1\n1,x\n", "t.csv:3.bps"),
        ("time,bps\n1,1\n0,2\n", "t.csv.times[1]"),
        ('{"t": 1, "bps": 5}\n{"t": 2}\n', "t.csv:2.bps"),
    ],
)
def test_bad_traces_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_trace(path)
    assert caught.value.field == f"{tmp_path}/{field}"


def test_events_one_a_line_with_comments(tmp_path: Path) -> None:
    (tmp_path / "e").write_text("# degradations\n10\n\n20.5  # second\n")
    assert [e.degraded for e in read_events(tmp_path / "e")] == [10, 20.5]


def test_a_monitor_log_fills_in_detection_and_switch(tmp_path: Path) -> None:
    records = [
        {"t": 9.0, "kind": "probe", "rtt_ms": 2},
        {"t": 10.0, "kind": "degrade"},
        {"t": 10.2, "kind": "detect", "reason": "rtt"},
        {"t": 10.21, "kind": "action", "ok": True, "done": 10.25},
        {"t": 10.5, "kind": "detect"},
        {"t": 20.0, "kind": "degrade"},
        {"t": 20.3, "kind": "action", "ok": False, "done": 20.31},
    ]
    (tmp_path / "log").write_text("".join(json.dumps(r) + "\n" for r in records))
    first, second = read_events(tmp_path / "log")
    assert (first.degraded, first.detected, first.switched) == (10.0, 10.2, 10.25)
    assert (second.detected, second.switched) == (None, None)


def test_files_without_events_say_so(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("# nothing\n")
    (tmp_path / "log").write_text('{"t": 1, "kind": "probe"}\n')
    for name in ("empty", "log"):
        with pytest.raises(InputError, match="no"):
            read_events(tmp_path / name)
    with pytest.raises(InputError, match="cannot read"):
        read_events(tmp_path / "missing")
