"""`braid analyze …`: offline analysis of measurements (seed 003's impulse response)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from braid.cli.common import fail, require_module
from braid.core.errors import InputError
from braid.core.impulse import Comparison, ImpulseAnalysis, ImpulseSettings

app = typer.Typer(help="Offline analysis of measurements.", no_args_is_help=True)

Seconds = Annotated[float | None, typer.Option(help="Seconds; default from the data.")]


@app.command("impulse-response")
def impulse_response(
    trace: Annotated[
        Path, typer.Argument(help="Throughput trace: CSV time,bps | JSON lines | iperf3 --json.")
    ],
    events: Annotated[
        Path,
        typer.Option(
            "--events",
            help="Event times, one a line, or a monitor's JSON-lines log with degrade records.",
        ),
    ],
    compare: Annotated[
        tuple[Path, Path] | None,
        typer.Option("--compare", help="A second configuration: TRACE2 EVENTS2."),
    ] = None,
    labels: Annotated[str, typer.Option("--labels", help="Names of the two, comma-separated.")] = (
        "first,second"
    ),
    period: Annotated[float | None, typer.Option(help="T, seconds per response window.")] = None,
    step: Annotated[float | None, typer.Option(help="δ, seconds between points.")] = None,
    lead: Annotated[float | None, typer.Option(help="Seconds of window before the event.")] = None,
    pre: Annotated[float | None, typer.Option(help="Seconds averaged for the pre-event rate.")] = (
        None
    ),
    peak: Annotated[float | None, typer.Option(help="B in Mbit/s (default: the trace's top).")] = (
        None
    ),
    recovered: Annotated[float, typer.Option(help="Fraction of the pre-event rate.")] = 0.9,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap's draws.")] = 1,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples over events.")] = 1000,
    confidence: Annotated[float, typer.Option(help="Width of the bootstrap band.")] = 0.9,
    bin_width: Annotated[float, typer.Option(help="Histogram bin, seconds.")] = 0.1,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the figure (PNG + PDF).")] = (
        None
    ),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Seed 003's impulse response: Rᵢ per event, R̂, a bootstrap band, per-event timings."""
    import numpy as np

    from braid.adapters.failover.files import read_events, read_trace
    from braid.adapters.failover.report import analysis_json, comparison_json
    from braid.core.impulse import Trace, analyze
    from braid.core.impulse import compare as compare_runs

    names = [n.strip() for n in labels.split(",")]
    if len(names) != 2 or not all(names):
        fail(f"--labels: {labels!r}: give two names, comma-separated")
    if plot is not None:
        if plot.suffix.lower() not in (".png", ".svg", ".pdf"):
            fail(f"--plot: {plot.name} must end in .png, .svg or .pdf")
        if not plot.parent.is_dir():
            fail(f"--plot: directory {plot.parent} does not exist")
        require_module("matplotlib", "plot", "--plot")
    settings = ImpulseSettings(
        period=period,
        step=step,
        lead=lead,
        pre=pre,
        peak=None if peak is None else peak * 1e6,
        recovered=recovered,
        confidence=confidence,
        resamples=resamples,
    )
    inputs = [(trace, events)] + ([compare] if compare is not None else [])
    runs: list[tuple[str, ImpulseAnalysis]] = []
    try:
        for k, (trace_path, events_path) in enumerate(inputs):
            loaded: Trace = read_trace(trace_path)
            marks = read_events(events_path)
            rng = np.random.default_rng(seed)
            runs.append((names[k], analyze(loaded, marks, settings, rng)))
        result = compare_runs(runs[0][1], runs[1][1], bin_width) if len(runs) == 2 else None
    except InputError as exc:
        fail(f"{_option(exc.field)}: {exc.message}" if exc.field else exc.message)
    figures: list[Path] = []
    if plot is not None:
        from braid.studies.impulse.plot import plot_impulse

        figures = plot_impulse(runs, plot, result)
    if as_json:
        doc: dict[str, object] = {name: analysis_json(run) for name, run in runs}
        if result is not None:
            doc["comparison"] = comparison_json(result)
        doc["figures"] = [str(p) for p in figures]
        typer.echo(json.dumps(doc, indent=2))
        return
    _print(runs, result, figures)


def _option(field: str) -> str:
    """A settings field as the option that sets it; file fields as they are."""
    known = {"period", "step", "lead", "pre", "peak", "recovered", "confidence", "resamples"}
    if field in known or field == "bin_width":
        return "--" + field.replace("_", "-")
    return field


def _print(
    runs: list[tuple[str, ImpulseAnalysis]], result: Comparison | None, figures: list[Path]
) -> None:
    console = Console()

    def cell(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    for name, run in runs:
        table = Table(
            title=f"{name}: n = {len(run.events)}, T = {run.period:g} s, "
            f"δ = {run.step:g} s, B = {run.peak / 1e6:.2f} Mbit/s"
        )
        for column in ("event at", "pre Mbit/s", "detect s", "switch s", "dip s", "90 % back s"):
            table.add_column(column, justify="right")
        for e in run.events:
            table.add_row(
                f"{e.degraded:.3f}",
                f"{e.pre_rate / 1e6:.2f}",
                cell(e.detect),
                cell(e.switch),
                cell(e.dip),
                cell(e.recovery),
            )
        table.add_row(
            "median", "", *(cell(run.median(f)) for f in ("detect", "switch", "dip", "recovery"))
        )
        console.print(table)
    if result is not None:
        delays = ", ".join(f"{d:.3f}" for d in result.delays) or "none"
        console.print(
            f"{runs[1][0]} recovers later than {runs[0][0]} by (s): {delays}; "
            f"median {cell(result.median)}; unpaired events: {result.unpaired}"
        )
    for path in figures:
        console.print(f"wrote {path}")
