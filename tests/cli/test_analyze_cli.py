"""`braid analyze impulse-response` through the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.unit.figure_files import png_dpi


def braid(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "braid.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _trace(path: Path, outage: dict[int, float]) -> Path:
    rows = [f"{t},{outage.get(t, 100)}" for t in range(31)]
    path.write_text("time,mbps\n" + "\n".join(rows) + "\n")
    return path


def test_two_configurations_compared_with_json_and_figures(tmp_path: Path) -> None:
    fast = _trace(tmp_path / "fast.csv", {10: 0, 11: 0, 12: 50, 20: 0, 21: 0, 22: 50})
    slow = _trace(tmp_path / "slow.csv", {t: 0 for t in (10, 11, 12, 13, 20, 21, 22, 23, 24)})
    events = tmp_path / "events.txt"
    events.write_text("10\n20\n")
    plot = tmp_path / "ir.png"
    result = braid(
        "analyze", "impulse-response", str(fast), "--events", str(events),
        "--compare", str(slow), str(events), "--labels", "direct,controller",
        "--period", "10", "--step", "1", "--lead", "1", "--plot", str(plot), "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["direct"]["median_s"]["recovery"] == 3
    assert doc["direct"]["mean_mbps"][:4] == [0, 100, 100, 50]
    assert doc["controller"]["median_s"]["recovery"] == 4.5
    assert doc["comparison"]["relative_delays_s"] == [1, 2]
    assert round(png_dpi(plot)) == 300 and plot.with_suffix(".pdf").stat().st_size > 0


def test_tables_without_json(tmp_path: Path) -> None:
    trace = _trace(tmp_path / "t.csv", {10: 0})
    (tmp_path / "e").write_text("10\n")
    result = braid("analyze", "impulse-response", str(trace), "--events", str(tmp_path / "e"))
    assert result.returncode == 0, result.stderr
    assert "90 % back s" in result.stdout


def test_errors_name_the_field(tmp_path: Path) -> None:
    trace = _trace(tmp_path / "t.csv", {10: 0})
    (tmp_path / "none").write_text("")
    (tmp_path / "late").write_text("29\n")
    (tmp_path / "e").write_text("10\n")
    cases = [
        (["--events", str(tmp_path / "none")], "no degradation events"),
        (["--events", str(tmp_path / "late"), "--period", "5"], "events[0]"),
        (["--events", str(tmp_path / "e"), "--period", "0"], "--period"),
        (["--events", str(tmp_path / "e"), "--labels", "one"], "--labels"),
        (["--events", str(tmp_path / "e"), "--plot", str(tmp_path / "x.gif")], "--plot"),
    ]
    for args, needle in cases:
        result = braid("analyze", "impulse-response", str(trace), *args)
        assert result.returncode == 2, (args, result.stdout)
        assert needle in " ".join(result.stderr.split()), (args, result.stderr)
