"""Seed 003's figures: per-event responses, response means side by side, relative delays."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from braid.core.impulse import Comparison, ImpulseAnalysis
from braid.studies.figures import HATCHES, PALETTE, REFERENCE, SUFFIXES, save, styled

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_impulse"]

MBPS = 1e6


def plot_impulse(
    runs: Sequence[tuple[str, ImpulseAnalysis]],
    path: Path,
    comparison: Comparison | None = None,
) -> list[Path]:
    """One panel per configuration (each event's Rᵢ, R̂ and its band), then the means
    side by side, then (given a comparison) the histogram of relative delays.

    Writes a 300-dpi PNG and a vector file of the same stem; returns both.
    """
    if path.suffix and path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"--plot: {path.name} must end in one of {', '.join(SUFFIXES)}")
    panels = len(runs) + (1 if len(runs) > 1 else 0) + (1 if comparison is not None else 0)
    with styled(3.4 * panels, 3.2) as fig:
        axes = fig.subplots(1, panels, squeeze=False)[0]
        for k, (label, run) in enumerate(runs):
            _responses(axes[k], label, run, PALETTE[k % len(PALETTE)])
        if len(runs) > 1:
            _means(axes[len(runs)], runs)
        if comparison is not None:
            _histogram(axes[-1], comparison, runs)
        return save(fig, path)


def _responses(ax: Axes, label: str, run: ImpulseAnalysis, colour: str) -> None:
    xs = list(run.offsets)
    for event in run.events:
        ax.plot(
            xs,
            [r / MBPS for r in event.response],
            color="#999999",
            linewidth=0.6,
            drawstyle="steps-post",
        )
    if run.band_low is not None and run.band_high is not None:
        ax.fill_between(
            xs,
            [v / MBPS for v in run.band_low],
            [v / MBPS for v in run.band_high],
            color=colour,
            alpha=0.25,
            step="post",
            hatch=HATCHES[1],
            label="bootstrap band",
        )
    ax.plot(
        xs,
        [v / MBPS for v in run.mean],
        color=colour,
        linewidth=1.8,
        drawstyle="steps-post",
        label="response mean R̂",
    )
    ax.plot([], [], color="#999999", linewidth=0.6, label=f"Rᵢ, n = {len(run.events)}")
    ax.axvline(0, color=REFERENCE, linestyle=":", linewidth=1, label="degradation")
    ax.set_title(label)
    ax.set_xlabel("seconds from the degradation")
    ax.set_ylabel(f"unused rate B − T(t), Mbit/s (B = {run.peak / MBPS:.1f})")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)


def _means(ax: Axes, runs: Sequence[tuple[str, ImpulseAnalysis]]) -> None:
    styles = ("-", "--", "-.", ":")
    for k, (label, run) in enumerate(runs):
        ax.plot(
            list(run.offsets),
            [v / MBPS for v in run.mean],
            color=PALETTE[k % len(PALETTE)],
            linestyle=styles[k % len(styles)],
            linewidth=1.6,
            drawstyle="steps-post",
            label=label,
        )
    ax.axvline(0, color=REFERENCE, linestyle=":", linewidth=1)
    ax.set_title("response means")
    ax.set_xlabel("seconds from the degradation")
    ax.set_ylabel("R̂, Mbit/s")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)


def _histogram(
    ax: Axes, comparison: Comparison, runs: Sequence[tuple[str, ImpulseAnalysis]]
) -> None:
    names = [label for label, _ in runs] + ["first", "second"]
    if comparison.counts:
        edges = list(comparison.edges)
        ax.hist(
            edges[:-1],
            bins=edges,
            weights=list(comparison.counts),
            color=PALETTE[1],
            hatch=HATCHES[2],
            edgecolor="white",
        )
    else:
        ax.text(0.5, 0.5, "no event recovered in both", ha="center", transform=ax.transAxes)
    ax.set_title(f"{names[1]} relative to {names[0]}")
    ax.set_xlabel("recovery delay per event, s")
    ax.set_ylabel("events")
