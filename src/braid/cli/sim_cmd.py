"""`braid sim …`: in-process simulations (seed 000's success-rate study)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from braid.cli.common import err_console, fail, require_module
from braid.core.errors import InputError
from braid.studies.success_rate.evaluate import PAPER_STRATEGIES
from braid.studies.success_rate.sim import PAPER_FIGURES
from braid.studies.success_rate.study import SuccessRateStudy, run_success_rate
from braid.studies.success_rate.workload import SimConfig

app = typer.Typer(help="Simulations (in-process, reproducible from a seed).", no_args_is_help=True)


@app.command("success-rate")
def success_rate(
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw.")] = 1,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Processes running repetitions in parallel.")
    ] = 1,
    repetitions: Annotated[int, typer.Option("--repetitions", min=1)] = 32,
    requests: Annotated[int, typer.Option("--requests", min=1, help="Per repetition.")] = 100,
    entries: Annotated[int, typer.Option("--entries", min=1, help="Schedule length.")] = 1000,
    domains: Annotated[int, typer.Option("--domains", min=1, help="Most participants.")] = 4,
    max_duration: Annotated[
        int, typer.Option("--max-duration", min=1, help="Longest request window, in entries.")
    ] = 1,
    slack: Annotated[
        int, typer.Option("--slack", min=0, help="User slack on the start, in entries (flex).")
    ] = 4,
    target: Annotated[
        float, typer.Option("--target", help="Single-domain success to calibrate to (0..1).")
    ] = 0.5,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Write the figure: a 300-dpi PNG and a vector file of the same stem "
            "(FILE.svg gives SVG, else PDF).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Success rate vs number of domains: the paper's strategies and braid's (seed 000 §6)."""
    config = SimConfig(
        entries=entries,
        requests=requests,
        repetitions=repetitions,
        domains=domains,
        max_duration=max_duration,
        slack=slack,
        target_single=target,
    )
    try:
        config.check()
    except InputError as exc:
        option = {"target_single": "target"}.get(exc.field, exc.field)
        fail(f"--{option.replace('_', '-')}: {exc.message}")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: {plot.name} must end in .png, .svg or .pdf")
    if plot is not None and not plot.parent.is_dir():
        fail(f"--plot: directory {plot.parent} does not exist")
    if plot is not None:
        require_module("matplotlib", "plot", "--plot")
    began = time.perf_counter()
    study = _run_with_progress(config, seed, workers)
    elapsed = time.perf_counter() - began
    figures: list[Path] = []
    if plot is not None:
        from braid.studies.success_rate.plot import plot_success_rate

        try:
            figures = plot_success_rate(study, plot)
        except OSError as exc:
            fail(f"--plot: cannot write {plot}: {exc.strerror or exc}")
    if as_json:
        typer.echo(json.dumps(study.as_json(), indent=2))
    else:
        _print_tables(study, Console())
    err_console.print(
        f"[dim]{repetitions} repetitions in {elapsed:.2f} s with {workers} worker(s)"
        + (f"; figure written to {' and '.join(map(str, figures))}" if figures else "")
        + "[/]"
    )


def _run_with_progress(config: SimConfig, seed: int, workers: int) -> SuccessRateStudy:
    with Progress(
        TextColumn("repetitions"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as progress:
        task = progress.add_task("sim", total=config.repetitions)
        return run_success_rate(
            config,
            seed,
            workers=workers,
            progress=lambda done, _total: progress.update(task, completed=done),
        )


def _print_tables(study: SuccessRateStudy, console: Console) -> None:
    rates = study.rates
    config = study.config
    table = Table(
        title=(
            f"success rate (%), mean ± stdev over {config.repetitions} × {config.requests} "
            f"requests; largest request {study.scale / 1e6:,.0f} Mbit/s"
        )
    )
    table.add_column("strategy")
    for k in rates.domains:
        table.add_column(f"{k} domain{'s' if k > 1 else ''}", justify="right")
    for strategy in rates.strategies:
        label = strategy if strategy in PAPER_STRATEGIES else f"[cyan]{strategy}[/] (braid)"
        cells = [
            f"{100 * m:5.1f} ± {100 * s:4.1f}"
            for m, s in zip(rates.mean[strategy], rates.stdev[strategy], strict=True)
        ]
        table.add_row(label, *cells)
    console.print(table)
    paper = Table(title="seed 000 beside braid")
    for column in ("figure", "paper %", "braid %"):
        paper.add_column(column, justify="left" if column == "figure" else "right")
    for key, value in study.rates.ours().items():
        paper.add_row(key, f"{PAPER_FIGURES[key]:.2f}", f"{value:.2f}")
    console.print(paper)
