"""PNG plots of the emulation experiments (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: no display needed
import matplotlib.pyplot as plt

from braid.emulation.report import Report

Plotter = Callable[[Report, Path], Path]


def _save(fig: Any, out_dir: Path, name: str) -> Path:
    path = out_dir / name
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_sdx(report: Report, out_dir: Path) -> Path:
    """Like seed 000 Fig. 8c: % of the reservation per split, one line per streams/tunnel."""
    configs = list(dict.fromkeys(r["config"] for r in report.rows))
    fig, ax = plt.subplots(figsize=(7, 4))
    for k in sorted({r["streams_per_tunnel"] for r in report.rows}):
        by = {r["config"]: r["percent"] for r in report.rows if r["streams_per_tunnel"] == k}
        xs = [i for i, c in enumerate(configs) if c in by]
        ax.plot(xs, [by[configs[i]] for i in xs], marker="o", label=f"{k} stream(s)/tunnel")
    ax.axhline(93.0, color="grey", linestyle="--", linewidth=1, label="floor 93 %")
    ax.set_xticks(range(len(configs)), configs)
    ax.set_ylabel("aggregate goodput, % of reserved")
    ax.set_title("sdx-split: one tunnel vs split over two (seed 000 Fig. 8)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "sdx-split.png")


def plot_multipath(report: Report, out_dir: Path) -> Path:
    """Goodput vs number of flows: multipath vs best single path, per case."""
    cases = list(dict.fromkeys(r["case"] for r in report.rows))
    fig, axes = plt.subplots(1, len(cases), figsize=(4 * len(cases), 3.6), squeeze=False)
    for ax, case in zip(axes[0], cases, strict=True):
        rows = [r for r in report.rows if r["case"] == case]
        for mode in ("multipath", "best single path"):
            got = sorted((r["flows"], r["goodput_mbps"]) for r in rows if r["mode"] == mode)
            ax.plot([f for f, _ in got], [g for _, g in got], marker="o", label=mode)
        ax.axhline(rows[0]["summed_mbps"], color="grey", linestyle="--", label="summed capacity")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("TCP flows")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title(f"{case} ({rows[0]['paths_mbps']} Mbit/s)", fontsize=9)
        ax.legend(fontsize=7)
    return _save(fig, out_dir, "multipath.png")


def plot_tenants(report: Report, out_dir: Path) -> Path:
    """Per-tenant goodput, shared path vs braid (like seed 004 Fig. 6)."""
    modes = list(dict.fromkeys(r["mode"] for r in report.rows))
    tenants = sorted({r["tenant"] for r in report.rows})
    fig, ax = plt.subplots(figsize=(6, 4))
    width = 0.8 / max(len(modes), 1)
    for i, mode in enumerate(modes):
        by = {r["tenant"]: r["goodput_mbps"] for r in report.rows if r["mode"] == mode}
        ax.bar([t + i * width for t in range(len(tenants))], [by.get(t, 0) for t in tenants],
               width, label=mode)  # fmt: skip
    if report.rows:
        ax.axhline(report.rows[0]["required_mbps"], color="grey", linestyle="--",
                   label="requirement")  # fmt: skip
    ax.set_xticks([t + width * (len(modes) - 1) / 2 for t in range(len(tenants))], tenants)
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title("tenants: shared main path vs braid (seed 004 Fig. 6)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "tenants.png")


def plot_tenant_timeline(report: Report, out_dir: Path) -> Path:
    """Throughput per path over time while T2 arrives (like seed 004 Fig. 8)."""
    series = report.series.get("timeline") or {}
    fig, ax = plt.subplots(figsize=(7, 4))
    for path, values in (series.get("path_mbps") or {}).items():
        ax.plot(series["times_s"][: len(values)], values, label=path)
    if "t2_arrival_s" in series:
        ax.axvline(series["t2_arrival_s"], color="grey", linestyle=":", label="T2 arrives")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput on the path (Mbit/s)")
    ax.set_title("tenants: per-path throughput over time (seed 004 Fig. 8)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "tenants-timeline.png")


PLOTTERS: dict[str, list[Plotter]] = {
    "sdx-split": [plot_sdx],
    "multipath": [plot_multipath],
    "tenants": [plot_tenants, plot_tenant_timeline],
    "service": [],  # a handful of counts: the table says it all
}
