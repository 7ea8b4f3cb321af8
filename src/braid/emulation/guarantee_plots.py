"""`braid emulate guarantees` drawn: every flow's received rate each second, bookings as lines.

One panel per run (enforcement off, enforced), side by side on one rate
axis, so what enforcement changes reads across; PNG and SVG.
"""

from __future__ import annotations

from pathlib import Path

from braid.emulation.report import Report
from braid.studies.figures import PALETTE, REFERENCE, save, styled

__all__ = ["plot_guarantees"]

_STYLES = ("-", "--", "-.", ":", (0, (5, 1)))


def plot_guarantees(report: Report, out_dir: Path) -> list[Path]:
    runs = report.series.get("rates") or {}
    if not runs:
        return []
    # One colour and line style per flow in every panel, whatever order a run reported in.
    names = list(dict.fromkeys(name for run in runs.values() for name in run["flows"]))
    with styled(3.6 * len(runs) + 1.0, 4.2) as fig:
        axes = fig.subplots(1, len(runs), sharey=True, squeeze=False)[0]
        for ax, (mode, run) in zip(axes, runs.items(), strict=True):
            for name, data in run["flows"].items():
                i = names.index(name)
                color, style = PALETTE[i % len(PALETTE)], _STYLES[i % len(_STYLES)]
                for phase, label in (("together", name), ("idle", None)):
                    points = data[phase]
                    ax.plot(points["t"], points["mbps"], label=label, color=color,
                            linestyle=style, linewidth=1.1, clip_on=False)  # fmt: skip
                booked = run["booked_mbps"].get(name)
                if booked:
                    ax.axhline(booked, color=color, linewidth=0.7, alpha=0.6)
            ax.axhline(run["link_mbps"], color=REFERENCE, linewidth=0.8, linestyle=":",
                       label="link rate")  # fmt: skip
            ax.axvline(run["idle_from_s"] - 0.5, color=REFERENCE, linewidth=0.6, alpha=0.5)
            ax.text(run["idle_from_s"], run["link_mbps"] * 1.02, "reservations idle",
                    fontsize=6, va="bottom")  # fmt: skip
            ax.set_ylim(bottom=0, top=run["link_mbps"] * 1.12)
            ax.set_xlabel("time (s)")
            ax.set_title(mode)
        axes[0].set_ylabel("received (Mbit/s); thin lines: booked")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=7)
        fig.suptitle("guarantees: each flow's received rate per second")
        return save(fig, out_dir / "guarantees.svg")
