"""The emulation plots, drawn from reports shaped like the experiments write them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from braid.emulation.plots import PLOTTERS
from braid.emulation.report import FloorCheck, Report, median_trial, per_trial_key, write_report
from tests.unit.figure_files import png_dpi

STEMS = {
    "sdx-split": ["sdx-split"],
    "multipath": ["multipath"],
    "tenants": ["tenants", "tenants-timeline"],
    "packet-split": [
        "packet-split",
        "packet-split-congestion",
        "packet-split-mptcp",
        "packet-split-fairness",
    ],
}


def _sdx(trials: int) -> Report:
    report = Report("sdx-split", [], [])
    for c, config in enumerate(("1 tunnel", "SS1", "SS3", "SS5")):
        for k in (1, 2, 4, 8):
            runs = [
                {"config": config, "streams_per_tunnel": k, "percent": 94.0 + (c + k + t) % 5 / 2}
                for t in range(trials)
            ]
            report.rows.append(median_trial(runs, "percent"))
    report.floors = [FloorCheck(f"{c}, 2 streams per tunnel", 95.0, 93.0) for c in ("SS1", "SS3")]
    return report


def _multipath(trials: int) -> Report:
    report = Report("multipath", [], [])
    for case, paths in (("2 equal", (20, 20)), ("2 unequal", (20, 40))):
        for flows in (1, 8, 16):
            for mode, cap in (("multipath", sum(paths)), ("best single path", max(paths))):
                runs = [{"goodput_mbps": cap * (0.9 + t / 50)} for t in range(trials)]
                row = median_trial(runs, "goodput_mbps")
                report.rows.append(
                    {
                        "case": case,
                        "mode": mode,
                        "flows": flows,
                        "paths_mbps": "+".join(str(p) for p in paths),
                        "summed_mbps": float(sum(paths)),
                        **row,
                    }
                )
    report.floors = [FloorCheck("2 equal, 8 flows", 96.0, 95.0)]
    return report


def _tenants() -> Report:
    report = Report("tenants", [], [])
    for mode, got in (("shared main path", (9.6, 10.3)), ("braid", (19.8, 19.7))):
        for tenant, goodput in zip(("T1", "T2"), got, strict=True):
            report.rows.append(
                {"mode": mode, "tenant": tenant, "required_mbps": 20.0, "goodput_mbps": goodput}
            )
    times = [0.5 * i for i in range(20)]
    report.series["timeline"] = {
        "t2_arrival_s": 3.3,
        "times_s": times,
        "path_mbps": {
            "path 0": [20.0 if t < 3.3 else 30.0 for t in times],
            "path 1": [0.0 if t < 3.3 else 10.0 for t in times],
            "path 2": [0.0 for _ in times],
        },
    }
    return report


def _packet_split(trials: int) -> Report:
    report = Report("packet-split", [], [])
    for mode, pct in (("braid packet split", 97.0), ("best single path", 49.5)):
        report.rows.append({"part": "Table II", "case": "2 x 10 Mbit/s, 95 ms", "mode": mode,
                            "percent_of_sum": pct, "paper_pct": 91.0})  # fmt: skip
    for mdi in (0.0, 0.2):
        report.rows.append({"part": "Figure 3", "case": f"MDI {mdi:g}", "mode": "with resequencing",
                            "mdi": mdi, "percent_of_sum": 98.0})  # fmt: skip
    for delay in (25, 100):
        for mode, mbps in (("braid packet split", 19.0), ("MPTCP", 19.5), ("path 1 alone", 9.8)):
            runs = [{"goodput_mbps": mbps - t / 10} for t in range(trials)]
            report.rows.append({"part": "Figure 5", "case": f"second path {delay} ms",
                                "mode": mode, **median_trial(runs, "goodput_mbps")})  # fmt: skip
    t = [0.25 * i for i in range(40)]
    report.series["figure4"] = {
        "weights recomputed": {"t": t, "mbps": [29.0 if x < 4 else 12.0 for x in t],
                               "cwnd_t": t, "cwnd": [80 if x < 4 else 20 for x in t],
                               "t1": 4.0, "reweighed_at": 6.0},
        "weights fixed": {"t": t, "mbps": [29.0 if x < 4 else 1.0 for x in t],
                          "cwnd_t": t, "cwnd": [80 if x < 4 else 2 for x in t],
                          "t1": 4.0, "reweighed_at": None},
    }  # fmt: skip
    report.series["fairness"] = {
        "braid packet split": {"t": [1.0, 2.0, 3.0], "jain": [0.95, 0.97, 0.96]},
        "per-flow hashing": {"t": [1.0, 2.0, 3.0], "jain": [0.7, 0.72, 0.69]},
    }
    return report


REPORTS: dict[str, Any] = {
    "packet-split": [_packet_split(3), _packet_split(1)],
    "sdx-split": [_sdx(3), _sdx(1)],
    "multipath": [_multipath(3), _multipath(1)],
    "tenants": [_tenants()],
}


@pytest.mark.parametrize(
    ("experiment", "index"),
    [(name, i) for name, reports in REPORTS.items() for i in range(len(reports))],
)
def test_each_plot_is_a_300_dpi_png_and_a_pdf(tmp_path: Path, experiment: str, index: int) -> None:
    report = REPORTS[experiment][index]
    written = [p for plot in PLOTTERS[experiment] for p in plot(report, tmp_path)]
    expected = [
        tmp_path / f"{stem}{suffix}" for stem in STEMS[experiment] for suffix in (".png", ".pdf")
    ]
    assert written == expected
    for stem in STEMS[experiment]:
        assert png_dpi(tmp_path / f"{stem}.png") == pytest.approx(300, abs=0.5)
        assert (tmp_path / f"{stem}.pdf").read_bytes().startswith(b"%PDF")


def test_write_report_lists_both_files_of_every_plot(tmp_path: Path) -> None:
    written = write_report(_tenants(), tmp_path, PLOTTERS["tenants"])
    assert [p.name for p in written] == [
        "results.json",
        "results.md",
        "tenants.png",
        "tenants.pdf",
        "tenants-timeline.png",
        "tenants-timeline.pdf",
    ]


def test_the_median_trial_keeps_every_trial_for_the_plots() -> None:
    runs = [{"percent": 95.0}, {"percent": 93.5}, {"percent": 97.0}]
    row = median_trial(runs, "percent")
    assert row["percent"] == 95.0
    assert row[per_trial_key("percent")] == [95.0, 93.5, 97.0]
    assert row["trials"] == "95.0 93.5 97.0"


def test_importing_the_cli_and_the_plot_modules_loads_no_matplotlib() -> None:
    modules = (
        "braid.cli.main",
        "braid.bootstrap.serve",
        "braid.emulation.plots",
        "braid.studies.success_rate.plot",
        "braid.studies.success_rate.study",
    )
    code = f"import sys\nfor m in {modules!r}: __import__(m)\nprint('matplotlib' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
