"""The success-rate figure (seed 000 Fig. 6c, with braid's strategies beside it)."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from braid.studies.success_rate.evaluate import PAPER_STRATEGIES
from braid.studies.success_rate.sim import PAPER_FIGURES
from braid.studies.success_rate.study import SuccessRateStudy

SUFFIXES = (".png", ".svg", ".pdf")


def plot_success_rate(study: SuccessRateStudy, path: Path) -> None:
    """Write the figure to `path`; the suffix (.png, .svg, .pdf) picks the format."""
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"--plot: {path.name} must end in one of {', '.join(SUFFIXES)}")
    rates = study.rates
    # A bare Figure draws with the Agg canvas and touches no global pyplot state.
    fig = Figure(figsize=(7.5, 4.8))
    ax = fig.subplots()
    for strategy in rates.strategies:
        paper = strategy in PAPER_STRATEGIES
        ax.errorbar(
            rates.domains,
            [100 * x for x in rates.mean[strategy]],
            yerr=[100 * x for x in rates.stdev[strategy]],
            marker="o" if paper else "s",
            linestyle="-" if paper else "--",
            capsize=3,
            label=strategy + ("" if paper else " (braid)"),
        )
    ax.axhline(100 * rates.single, color="grey", linestyle=":", label="single domain")
    ax.axhline(PAPER_FIGURES["single domain"], color="black", linewidth=0.6, alpha=0.5)
    ax.plot([2], [PAPER_FIGURES["two paths (Fig. 6b)"]], "k*", markersize=10, label="paper")
    ax.plot([4], [PAPER_FIGURES["four visible domains"]], "k*", markersize=10)
    ax.set_xticks(list(rates.domains))
    ax.set_xlabel("participant domains (independent paths)")
    ax.set_ylabel("success rate (%); bars: stdev over repetitions")
    ax.set_ylim(0, 102)
    config = study.config
    ax.set_title(
        f"Success rate: {config.repetitions} × {config.requests} requests, "
        f"{config.entries}-entry schedules, seed {study.seed}",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
