"""Figures of `braid emulate packet-split`: Table II beside the paper's, and Figure 3."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from braid.emulation.report import Report
from braid.studies.figures import PALETTE, REFERENCE, grouped_bars, save, styled

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_packet_split"]


def plot_packet_split(report: Report, out_dir: Path) -> list[Path]:
    """Left: Table II (% of the summed capacity: braid, the paper, the best path alone);
    right: Figure 3 (% against MDI, with and without resequencing)."""
    table = [r for r in report.rows if r["part"] == "Table II"]
    fig3 = [r for r in report.rows if r["part"] == "Figure 3"]
    panels = [p for p in (table, fig3) if p]
    if not panels:
        return []
    with styled(5.0 * len(panels), 5.0) as fig:
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        index = 0
        if table:
            _table(axes[index], table)
            index += 1
        if fig3:
            _figure3(axes[index], fig3)
        return save(fig, out_dir / "packet-split.png")


def _table(ax: Axes, rows: list[dict[str, object]]) -> None:
    cases = list(dict.fromkeys(str(r["case"]) for r in rows))
    cell = {(r["case"], r["mode"]): r for r in rows}

    def heights(mode: str, key: str) -> list[float | None]:
        found = [cell.get((c, mode)) for c in cases]
        return [None if r is None or r[key] is None else float(str(r[key])) for r in found]

    grouped_bars(
        ax,
        cases,
        [
            ("braid packet split", heights("braid packet split", "percent_of_sum"), None),
            ("MPSDN (paper)", heights("braid packet split", "paper_pct"), None),
            ("best single path", heights("best single path", "percent_of_sum"), None),
        ],
    )
    ax.axhline(95, color=REFERENCE, linestyle="-.", linewidth=1, label="floor 95 %")
    ax.set_ylim(0, 110)
    ax.set_ylabel("% of the summed path capacity")
    ax.set_title("Table II: one TCP flow over two paths")
    _legend_below(ax)


def _figure3(ax: Axes, rows: list[dict[str, object]]) -> None:
    modes = list(dict.fromkeys(str(r["mode"]) for r in rows))
    for color, mode in zip(PALETTE, modes, strict=False):
        points = sorted(
            (float(str(r["mdi"])), float(str(r["percent_of_sum"])))
            for r in rows
            if r["mode"] == mode
        )
        style = "--" if "2017" in mode else "-"
        xs, ys = [x for x, _ in points], [y for _, y in points]
        ax.plot(xs, ys, marker="o", linestyle=style, color=color, label=mode)
    ax.axhline(50, color=REFERENCE, linestyle=":", linewidth=1, label="one path's capacity")
    ax.axvline(
        0.15, color="#777777", linestyle="--", linewidth=1, label="MDI 0.15: resequence above"
    )
    ax.set_xlim(-0.02, 0.42)
    ax.set_xlabel("MDI (first path 25 ms one way)")
    ax.set_ylabel("% of the summed path capacity")
    ax.set_ylim(0, 110)
    ax.set_title("Figure 3: aggregate against delay imbalance")
    _legend_below(ax)


def _legend_below(ax: Axes) -> None:
    """Under the axes, clear of the data (as every experiment's figure)."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2, fontsize="small")
