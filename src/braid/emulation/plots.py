"""Plots of the emulation experiments: each a 300-dpi PNG and a PDF of the same stem.

matplotlib is loaded only when a plot is drawn (by `braid.studies.figures`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from braid.emulation.failover.plots import plot_extra_flows, plot_impulse_responses, plot_traces
from braid.emulation.guarantee_plots import plot_guarantees
from braid.emulation.packet_split_plots import (
    plot_congestion,
    plot_fairness,
    plot_mptcp,
    plot_packet_split,
)
from braid.emulation.report import Report, per_trial_key
from braid.studies.figures import PALETTE, REFERENCE, grouped_bars, save, styled

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Plotter = Callable[[Report, Path], list[Path]]
_LABEL_BOX = {"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none"}


def _spread(rows: Sequence[dict[str, Any] | None], key: str) -> list[tuple[float, float]] | None:
    """(lowest, highest) trial of `key` per row, or None when no row ran more than one."""
    trials = [list(r.get(per_trial_key(key)) or [r[key]]) if r else [0.0] for r in rows]
    if all(len(t) < 2 for t in trials):
        return None
    return [(min(t), max(t)) for t in trials]


def _trials_note(rows: Sequence[dict[str, Any]], key: str) -> str:
    counts = sorted({len(r.get(per_trial_key(key)) or [r[key]]) for r in rows})
    if not counts or counts[-1] < 2:
        return "one trial per bar: no spread to show"
    told = "/".join(str(c) for c in counts)
    return f"bars: median of {told} trials; whiskers: lowest to highest trial"


def _values_at_foot(ax: Axes, fmt: str) -> None:
    """Each bar's value inside its foot, for gaps a 0-based axis cannot show."""
    from matplotlib.patches import Rectangle

    for bar in ax.patches:
        if isinstance(bar, Rectangle) and bar.get_height() > 0:
            ax.annotate(
                format(bar.get_height(), fmt),
                (bar.get_x() + bar.get_width() / 2, 0),
                xytext=(0, 4),
                textcoords="offset points",
                ha="center",
                va="bottom",
                rotation=90,
                fontsize=6,
                bbox=_LABEL_BOX,
            )


def _legend_below(fig: Figure, axes: Sequence[Axes], title: str, first: Sequence[str] = ()) -> None:
    """One legend for every panel, under them: clear of the data whatever it holds."""
    handles: dict[str, Any] = dict.fromkeys(first)  # these first (the bars), then the rest
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles[label] = handles.get(label) or handle
    shown = {label: h for label, h in handles.items() if h is not None}
    fig.legend(
        shown.values(),
        shown.keys(),
        loc="outside lower center",
        ncols=len(shown) if len(shown) == 4 else min(len(shown), 3),
        title=title,
        title_fontsize=8,
    )


def plot_sdx(report: Report, out_dir: Path) -> list[Path]:
    """Like Chung et al. Fig. 8c: % of the reservation per split, bars per streams/tunnel."""
    configs = list(dict.fromkeys(r["config"] for r in report.rows))
    streams = sorted({r["streams_per_tunnel"] for r in report.rows})
    cell = {(r["config"], r["streams_per_tunnel"]): r for r in report.rows}
    with styled(max(1.2 + (0.2 + 0.2 * len(streams)) * len(configs), 5.0), 4.2) as fig:
        ax = fig.subplots()
        groups = []
        for k in streams:
            rows = [cell.get((c, k)) for c in configs]
            heights = [r["percent"] if r else None for r in rows]
            groups.append((f"{k} stream(s)/tunnel", heights, _spread(rows, "percent")))
        grouped_bars(ax, configs, groups)
        _values_at_foot(ax, ".1f")
        for floor in sorted({f.floor for f in report.floors}):
            ax.axhline(
                floor,
                color=REFERENCE,
                linestyle="--",
                linewidth=1,
                label=f"floor {floor:g} % (splits, 2 streams/tunnel)",
            )
        ax.set_ylim(0, 105)
        ax.set_yticks(range(0, 101, 20))
        ax.set_xlabel("reservation: one tunnel, or split over two (Chung et al., Table 3)")
        ax.set_ylabel("aggregate goodput, % of reserved")
        ax.set_title("sdx-split: one tunnel vs split over two (Chung et al., Fig. 8)")
        _legend_below(fig, [ax], _trials_note(report.rows, "percent"), [g[0] for g in groups])
        return save(fig, out_dir / "sdx-split.png")


def plot_multipath(report: Report, out_dir: Path) -> list[Path]:
    """Goodput per number of flows, % of the summed capacity: multipath vs the best single path."""
    cases = list(dict.fromkeys(r["case"] for r in report.rows))
    modes = list(dict.fromkeys(r["mode"] for r in report.rows))
    flows = sorted({r["flows"] for r in report.rows})
    panel = 0.6 + (0.1 + 0.18 * len(modes)) * len(flows)
    with styled(max(panel * len(cases) + 0.5, 5.0), 4.2) as fig:
        axes = fig.subplots(1, len(cases), squeeze=False, sharey=True)[0]
        for ax, case in zip(axes, cases, strict=True):
            cell = {(r["mode"], r["flows"]): r for r in report.rows if r["case"] == case}
            first = next(iter(cell.values()))
            summed = float(first["summed_mbps"])
            groups = []
            for mode in modes:
                rows = [_as_percent(cell.get((mode, n)), summed) for n in flows]
                heights = [r["percent"] if r else None for r in rows]
                groups.append((mode, heights, _spread(rows, "percent")))
            grouped_bars(ax, [str(n) for n in flows], groups)
            best = max(float(p) for p in str(first["paths_mbps"]).split("+"))
            ax.axhline(
                100, color=REFERENCE, linestyle="--", linewidth=1, label="summed path capacity"
            )
            ax.axhline(
                100 * best / summed,
                color=REFERENCE,
                linestyle=":",
                linewidth=1,
                label="best single path's capacity",
            )
            for floor in {f.floor for f in report.floors if _floor_of(f.name, case)}:
                ax.axhline(
                    floor,
                    color="#777777",
                    linestyle="-.",
                    linewidth=1,
                    label=f"floor {floor:g} % (multipath)",
                )
            ax.set_xlabel("TCP flows")
            ax.set_title(f"{case}: paths {first['paths_mbps']} Mbit/s")
        axes[0].set_ylim(0, 110)
        axes[0].set_yticks(range(0, 101, 20))
        axes[0].set_ylabel("goodput, % of summed path capacity")
        _legend_below(fig, axes, _trials_note(report.rows, "goodput_mbps"), modes)
        fig.suptitle(
            "multipath: N TCP flows over disjoint paths vs the best single path (MPSDN, Table II)"
        )
        return save(fig, out_dir / "multipath.png")


def _as_percent(row: dict[str, Any] | None, summed: float) -> dict[str, Any] | None:
    """The row's goodput (and each trial's) as % of the summed path capacity."""
    if row is None:
        return None
    trials = row.get(per_trial_key("goodput_mbps")) or [row["goodput_mbps"]]
    return {
        "percent": 100 * float(row["goodput_mbps"]) / summed,
        per_trial_key("percent"): [100 * float(t) / summed for t in trials],
    }


def _floor_of(name: str, case: str) -> bool:
    """Is the floor check `name` one on `case`'s share of the summed capacity?"""
    return name.startswith(f"{case}, ") and ":" not in name


def plot_tenants(report: Report, out_dir: Path) -> list[Path]:
    """Per-tenant goodput, shared path vs braid (like TALON Fig. 6)."""
    modes = list(dict.fromkeys(r["mode"] for r in report.rows))
    tenants = sorted({r["tenant"] for r in report.rows})
    cell = {(r["mode"], r["tenant"]): r for r in report.rows}
    with styled(5.0, 4.0) as fig:
        ax = fig.subplots()
        groups = []
        for mode in modes:
            rows = [cell.get((mode, t)) for t in tenants]
            groups.append((mode, [r["goodput_mbps"] if r else None for r in rows], None))
        grouped_bars(ax, tenants, groups)
        _values_at_foot(ax, ".1f")
        required = max((float(r["required_mbps"]) for r in report.rows), default=0.0)
        if required:
            ax.axhline(
                required,
                color=REFERENCE,
                linestyle="--",
                linewidth=1,
                label=f"each tenant's requirement ({required:g} Mbit/s)",
            )
            ax.set_ylim(0, required * 1.15)
        ax.set_xlabel("tenant")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title("tenants: shared main path vs braid (TALON, Fig. 6)")
        _legend_below(fig, [ax], "one run per bar: no repetitions, no spread", modes)
        return save(fig, out_dir / "tenants.png")


def plot_tenant_timeline(report: Report, out_dir: Path) -> list[Path]:
    """Throughput per path over time while T2 arrives (like TALON Fig. 8)."""
    series = report.series.get("timeline") or {}
    styles = ("-", "--", "-.", ":")
    with styled(6.4, 4.0) as fig:
        ax = fig.subplots()
        for i, (path, values) in enumerate((series.get("path_mbps") or {}).items()):
            ax.plot(
                series["times_s"][: len(values)],
                values,
                label=path,
                color=PALETTE[i % len(PALETTE)],
                linestyle=styles[i % len(styles)],
                clip_on=False,
                zorder=3,
            )  # an idle path shows over the axis
        if "t2_arrival_s" in series:
            ax.axvline(
                series["t2_arrival_s"],
                color=REFERENCE,
                linestyle=":",
                linewidth=1,
                label=f"T2 arrives ({series['t2_arrival_s']:g} s)",
            )
        ax.set_ylim(bottom=0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput on the path (Mbit/s)")
        ax.set_title("tenants: per-path throughput over time (TALON, Fig. 8)")
        _legend_below(fig, [ax], "one run")
        return save(fig, out_dir / "tenants-timeline.png")


PLOTTERS: dict[str, list[Plotter]] = {
    "sdx-split": [plot_sdx],
    "multipath": [plot_multipath],
    "tenants": [plot_tenants, plot_tenant_timeline],
    "service": [],  # a handful of counts: the table says it all
    "service-failover": [],  # one row of times and counts
    "packet-split": [plot_packet_split, plot_congestion, plot_mptcp, plot_fairness],
    "failover": [plot_traces, plot_impulse_responses, plot_extra_flows],
    "guarantees": [plot_guarantees],
}
