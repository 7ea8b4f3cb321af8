"""Figures of `braid emulate packet-split`: Table II beside the paper's and Figure 3
(`packet-split.png`); Figure 4, a path congested (`packet-split-congestion.png`); Figure 5,
against MPTCP (`packet-split-mptcp.png`); Jain's index over ten flows
(`packet-split-fairness.png`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from braid.emulation.report import Report
from braid.studies.figures import MARKERS, PALETTE, REFERENCE, grouped_bars, save, styled

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_congestion", "plot_fairness", "plot_mptcp", "plot_packet_split"]

PAPER_JAIN = 0.81


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


def plot_congestion(report: Report, out_dir: Path) -> list[Path]:
    """Figure 4: (a) throughput delivered over time, (b) the sender's congestion window;
    a line per mode, the flood's start and the weights' change marked."""
    runs = report.series.get("figure4") or {}
    if not runs:
        return []
    with styled(10.0, 4.2) as fig:
        rate_ax, cwnd_ax = fig.subplots(1, 2)
        for color, (mode, run) in zip(PALETTE, runs.items(), strict=False):
            rate_ax.plot(run["t"], run["mbps"], color=color, linewidth=1, label=mode)
            cwnd_ax.plot(run["cwnd_t"], run["cwnd"], color=color, linewidth=1, label=mode)
            if run.get("reweighed_at") is not None:
                for ax in (rate_ax, cwnd_ax):
                    ax.axvline(run["reweighed_at"], color=color, linestyle=":", linewidth=1,
                               label="T2: weights recomputed")  # fmt: skip
        t1 = next(iter(runs.values()))["t1"]
        for ax in (rate_ax, cwnd_ax):
            ax.axvline(t1, color=REFERENCE, linestyle="--", linewidth=1, label="T1: UDP flood")
            ax.set_xlabel("time (s)")
            ax.set_ylim(bottom=0)
        rate_ax.set_ylabel("throughput to the receiver (Mbit/s)")
        rate_ax.set_title("Figure 4a: aggregate throughput")
        cwnd_ax.set_ylabel("sender's congestion window (segments)")
        cwnd_ax.set_title("Figure 4b: congestion window")
        _legend_below(rate_ax)
        _legend_below(cwnd_ax)
        return save(fig, out_dir / "packet-split-congestion.png")


def plot_mptcp(report: Report, out_dir: Path) -> list[Path]:
    """Figure 5: goodput per second-path delay, a bar per mode (median; whiskers: trials)."""
    rows = [r for r in report.rows if r["part"] == "Figure 5"]
    if not rows:
        return []
    cases = list(dict.fromkeys(str(r["case"]) for r in rows))
    modes = list(dict.fromkeys(str(r["mode"]) for r in rows))
    cell = {(r["case"], r["mode"]): r for r in rows}
    groups: list[tuple[str, list[float | None], list[tuple[float, float]] | None]] = []
    for mode in modes:
        found = [cell.get((c, mode)) for c in cases]
        heights = [None if r is None else float(r["goodput_mbps"]) for r in found]
        spreads = [_spread(r) for r in found]
        whole = [x for x in spreads if x is not None]
        groups.append((mode, heights, whole if len(whole) == len(spreads) else None))
    with styled(7.5, 4.5) as fig:
        ax = fig.subplots()
        grouped_bars(ax, cases, groups)
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.set_title("Figure 5: braid's packet split against MPTCP (first path 25 ms)")
        _legend_below(ax)
        return save(fig, out_dir / "packet-split-mptcp.png")


def _spread(row: dict[str, object] | None) -> tuple[float, float] | None:
    values = row.get("goodput_mbps_per_trial") if row else None
    if not isinstance(values, list) or len(values) < 2:
        return None
    return (min(values), max(values))


def plot_fairness(report: Report, out_dir: Path) -> list[Path]:
    """Jain's index of ten flows each second, a line per mode, the paper's mean marked."""
    runs = report.series.get("fairness") or {}
    if not runs:
        return []
    with styled(6.0, 4.2) as fig:
        ax = fig.subplots()
        for color, marker, (mode, run) in zip(PALETTE, MARKERS, runs.items(), strict=False):
            ax.plot(run["t"], run["jain"], color=color, marker=marker, markersize=3,
                    linewidth=1, label=mode)  # fmt: skip
        ax.axhline(PAPER_JAIN, color=REFERENCE, linestyle="-.", linewidth=1,
                   label=f"MPSDN (paper), mean {PAPER_JAIN}")  # fmt: skip
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("Jain's fairness index, 10 flows")
        ax.set_title("Intra-flow fairness over one reservation")
        _legend_below(ax)
        return save(fig, out_dir / "packet-split-fairness.png")
