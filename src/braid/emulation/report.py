"""Experiment results: one JSON file, one Markdown table, plots, and floor checks."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class FloorCheck:
    """A figure the issue sets a floor for: measured `value` against `floor` (same unit)."""

    name: str
    value: float
    floor: float
    unit: str = "%"
    at_most: bool = False  # a ceiling (a delay, a time) rather than a floor

    @property
    def passed(self) -> bool:
        return self.value <= self.floor if self.at_most else self.value >= self.floor

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        bound = "at most" if self.at_most else "floor"
        return (
            f"{mark} {self.name}: {self.value:.1f}{self.unit} ({bound} {self.floor:g}{self.unit})"
        )


@dataclass
class Report:
    """What an experiment measured; `rows` are flat dicts, one per run."""

    experiment: str
    notes: list[str]
    columns: list[tuple[str, str]]  # (row key, column title)
    rows: list[dict[str, Any]] = field(default_factory=list)
    floors: list[FloorCheck] = field(default_factory=list)
    series: dict[str, Any] = field(default_factory=dict)  # time series for plots
    findings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.floors)

    def as_json(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "notes": self.notes,
            "rows": self.rows,
            "floors": [{**asdict(f), "passed": f.passed} for f in self.floors],
            "findings": self.findings,
            "series": self.series,
            "passed": self.passed,
        }

    def markdown(self) -> str:
        lines = [f"# braid emulate {self.experiment}", ""]
        lines += [f"- {n}" for n in self.notes]
        lines += ["", "| " + " | ".join(t for _, t in self.columns) + " |"]
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(_cell(row.get(k)) for k, _ in self.columns) + " |")
        if self.floors:
            lines += ["", "## Floors", ""] + [f"- {f.line()}" for f in self.floors]
        if self.findings:
            lines += ["", "## Findings", ""] + [f"- {f}" for f in self.findings]
        return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def median_trial(trials: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """The trial with the median `key` (the lower middle one for an even count), noting all.

    Every trial's `key` is kept, in run order, under `per_trial_key(key)` (the
    plots draw their spread); `trials` says them in the Markdown table.
    """
    ordered = sorted(trials, key=lambda t: float(t[key]))
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen[per_trial_key(key)] = [float(t[key]) for t in trials]
    if len(trials) > 1:
        chosen["trials"] = " ".join(f"{float(t[key]):.1f}" for t in trials)
    return chosen


def per_trial_key(key: str) -> str:
    """The row key under which `median_trial` keeps every trial's `key`."""
    return f"{key}_per_trial"


def host_load_note() -> str:
    """The host's load while measuring: results on a busy 2-core host vary with it."""
    one, five, _ = os.getloadavg()
    return f"host load average {one:.1f} (1 min), {five:.1f} (5 min), {os.cpu_count()} CPUs"


class Progress(Protocol):
    """How an experiment tells the front end how far it got."""

    def start(self, total: int, title: str) -> None: ...

    def step(self, label: str) -> None: ...


class Silent:
    def start(self, total: int, title: str) -> None:
        del total, title

    def step(self, label: str) -> None:
        del label


def write_report(
    report: Report, out_dir: Path, plotters: Sequence[Callable[[Report, Path], list[Path]]] = ()
) -> list[Path]:
    """Write results.json, results.md and the plots (PNG + PDF) into `out_dir`; return the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "results.json"
    json_path.write_text(json.dumps(report.as_json(), indent=2) + "\n")
    md_path = out_dir / "results.md"
    md_path.write_text(report.markdown())
    written = [json_path, md_path]
    for plot in plotters:
        written.extend(plot(report, out_dir))
    return written
