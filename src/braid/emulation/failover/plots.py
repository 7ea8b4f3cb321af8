"""`braid emulate failover`'s figures (seed 003 Figs. 5, 8–11), each a 300-dpi PNG and a PDF.

- `failover-traces`: TCP throughput over the run, the degradations and the detections;
- `failover-impulse-<degradation>`: each method's responses Rᵢ with R̂ and its band, the
  response means side by side, and the histogram of the controller's delay relative to direct;
- `failover-extra-flows`: response means and rule-install times with 0, 10 and 100 extra
  flow entries per fail-over (full mode only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from braid.core.impulse import Comparison, EventResponse, ImpulseAnalysis
from braid.emulation.report import Report
from braid.studies.figures import PALETTE, REFERENCE, save, styled
from braid.studies.impulse.plot import plot_impulse

__all__ = ["plot_extra_flows", "plot_impulse_responses", "plot_traces"]


def _analysis(doc: dict[str, Any]) -> ImpulseAnalysis:
    """The analysis back from its JSON (Mbit/s to bit/s), for drawing only."""

    def bps(values: list[float] | None) -> tuple[float, ...] | None:
        return None if values is None else tuple(v * 1e6 for v in values)

    events = tuple(
        EventResponse(
            degraded=e["degraded"], pre_rate=e["pre_rate_mbps"] * 1e6, detect=e["detect_s"],
            switch=e["switch_s"], dip=e["dip_s"], recovery=e["recovery_s"],
            response=bps(r) or (),
        )
        for e, r in zip(doc["events"], doc["responses_mbps"], strict=True)
    )  # fmt: skip
    return ImpulseAnalysis(
        period=doc["period_s"], step=doc["step_s"], lead=doc["lead_s"],
        peak=doc["peak_mbps"] * 1e6, offsets=tuple(doc["offsets_s"]), events=events,
        mean=bps(doc["mean_mbps"]) or (), band_low=bps(doc["band_low_mbps"]),
        band_high=bps(doc["band_high_mbps"]),
    )  # fmt: skip


def plot_traces(report: Report, out: Path) -> list[Path]:
    runs: dict[str, Any] = report.series.get("runs", {})
    if not runs:
        return []
    with styled(7.0, 1.9 * len(runs) + 0.6) as fig:
        axes = fig.subplots(len(runs), 1, squeeze=False, sharex=True)[:, 0]
        for ax, (label, run) in zip(axes, runs.items(), strict=True):
            ax.plot(run["t"], run["mbps"], color=PALETTE[0], linewidth=0.9, label="TCP (CUBIC)")
            for k, at in enumerate(run["events"]):
                ax.axvline(at, color=REFERENCE, linestyle=":", linewidth=1,
                           label="degradation" if k == 0 else None)  # fmt: skip
            seen = [t for t in run["detected"] if t is not None]
            ax.plot(seen, [0] * len(seen), "v", color=PALETTE[3], label="detected (site A)")
            ax.set_title(label)
            ax.set_ylabel("Mbit/s")
            ax.set_ylim(bottom=0)
        axes[-1].set_xlabel("seconds since the run began")
        axes[-1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=3)
        return save(fig, out / "failover-traces.png")


def plot_impulse_responses(report: Report, out: Path) -> list[Path]:
    runs: dict[str, Any] = report.series.get("runs", {})
    comparisons: dict[str, Any] = report.series.get("comparisons", {})
    written: list[Path] = []
    for degradation in sorted({r["degradation"] for r in report.rows}):
        picked = [(row["config"], _analysis(runs[row["config"]]["analysis"]))
                  for row in report.rows
                  if row["degradation"] == degradation and not row["extra_flows"]]  # fmt: skip
        if not picked:
            continue
        found = comparisons.get(degradation)
        comparison = None
        if found is not None:
            histogram = found["histogram"]
            comparison = Comparison(
                tuple(found["relative_delays_s"]), found["unpaired_events"], found["median_s"],
                tuple(histogram["edges_s"]), tuple(histogram["counts"]),
            )  # fmt: skip
        written += plot_impulse(picked, out / f"failover-impulse-{degradation}.png", comparison)
    return written


def plot_extra_flows(report: Report, out: Path) -> list[Path]:
    rows = sorted(
        (r for r in report.rows if r["method"] == "direct" and r["degradation"] == "path-switch"),
        key=lambda r: r["extra_flows"],
    )
    if len({r["extra_flows"] for r in rows}) < 2:
        return []  # nothing to compare (the short mode runs without extra entries)
    runs: dict[str, Any] = report.series["runs"]
    with styled(7.0, 3.0) as fig:
        means, bars = fig.subplots(1, 2)
        for k, row in enumerate(rows):
            run = runs[row["config"]]["analysis"]
            means.plot(run["offsets_s"], run["mean_mbps"], color=PALETTE[k % len(PALETTE)],
                       drawstyle="steps-post", label=f"+{row['extra_flows']} entries")  # fmt: skip
            per_event = row["rules_ms_per_event"] or [0.0]
            bars.bar(k, row["rules_ms"] or 0.0, color=PALETTE[k % len(PALETTE)])
            bars.plot([k] * len(per_event), per_event, "_", color=REFERENCE)
        bars.set_xticks(range(len(rows)), [f"+{r['extra_flows']}" for r in rows])
        bars.set_ylabel("detection → rules in, ms")
        bars.set_title("bar: median; ticks: each site's events")
        bars.set_xlabel("extra flow entries per fail-over")
        means.set_title("response means")
        means.set_xlabel("seconds from the degradation")
        means.set_ylabel("response mean R̂, Mbit/s")
        means.set_ylim(bottom=0)
        means.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
        return save(fig, out / "failover-extra-flows.png")
