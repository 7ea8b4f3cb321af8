"""`braid emulate failover`'s results: the table, the floors and the series the plots draw."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from braid.adapters.failover.report import analysis_json, comparison_json
from braid.core.impulse import compare
from braid.emulation.failover.config import (
    DELAYS,
    EXTENDED_MS,
    MOVE_WINDOW,
    THRESHOLD_MS,
    ConfigResult,
    FailoverOptions,
)
from braid.emulation.report import FloorCheck, Report

__all__ = ["failover_report"]

COLUMNS = [
    ("config", "configuration"),
    ("events", "n"),
    ("detect_ms", "degradation → detection, ms"),
    ("rules_ms", "detection → rules in, ms"),
    ("moved_ms", "degradation → traffic on the other path, ms"),
    ("recovery_s", "TCP back to 90 %, s"),
    ("pre_mbps", "TCP before, Mbit/s"),
    ("actions", "actions A / B"),
]


def _median(values: Sequence[float | None]) -> float | None:
    seen = [v for v in values if v is not None]
    return statistics.median(seen) if seen else None


def _ms(value: float | None) -> float | None:
    return None if value is None else 1000 * value


def _row(result: ConfigResult) -> dict[str, Any]:
    run = result.analysis
    early = [k < len(result.early) and result.early[k] for k in range(len(result.events))]

    def clean(values: Sequence[float | None]) -> list[float | None]:
        return [v for v, was in zip(values, early, strict=False) if not was]

    return {
        "config": result.config.label,
        "method": result.config.method,
        "degradation": result.config.degradation,
        "extra_flows": result.config.extra,
        "events": len(result.events),
        "early_events": [k for k, was in enumerate(early) if was],
        "detect_ms": _ms(_median(clean([e.detect for e in run.events]))),
        "rules_ms": _median(result.rules_ms),
        "rules_ms_per_event": [round(v, 3) for v in result.rules_ms],
        "moved_ms": _ms(_median(clean(result.moved_s))),
        "moved_ms_per_event": [None if v is None else round(1000 * v, 1) for v in result.moved_s],
        "recovery_s": _median(clean([e.recovery for e in run.events])),
        "pre_mbps": statistics.median(e.pre_rate for e in run.events) / 1e6,
        "actions": " / ".join(str(result.actions.get(s, 0)) for s in ("A", "B")),
        "monitor_lost_probes": result.lost_probes,
        "emulator_frames": result.forwarded,
    }


def _series(result: ConfigResult) -> dict[str, Any]:
    return {
        "t": [round(t - result.t0, 3) for t in result.trace.times],
        "mbps": [round(r / 1e6, 3) for r in result.trace.rates],
        "events": [round(t - result.t0, 3) for t in result.events],
        "detected": [
            None if e.detect is None else round(e.degraded + e.detect - result.t0, 3)
            for e in result.analysis.events
        ],
        "analysis": analysis_json(result.analysis),
        "log": result.log,
    }


def failover_report(
    results: Sequence[ConfigResult],
    outage_ms: float | None,
    options: FailoverOptions,
    notes: list[str],
) -> Report:
    report = Report("failover", notes=_notes(options) + notes, columns=COLUMNS)
    report.rows = [_row(r) for r in results]
    report.series = {"runs": {r.config.label: _series(r) for r in results}}
    comparisons = {}
    for degradation in options.degradations:
        pair = {
            r.config.method: r
            for r in results
            if r.config.degradation == degradation and not r.config.extra
        }
        if "direct" in pair and "controller" in pair:
            result = compare(pair["direct"].analysis, pair["controller"].analysis, 0.05)
            moved = [
                None if a is None or b is None else round(1000 * (b - a), 1)
                for a, b in zip(pair["direct"].moved_s, pair["controller"].moved_s, strict=False)
            ]
            comparisons[degradation] = {**comparison_json(result), "moved_delay_ms": moved}
    report.series["comparisons"] = comparisons
    report.series["fast_failover_outage_ms"] = outage_ms
    report.floors = _floors(report.rows, outage_ms)
    report.findings = _findings(report.rows, comparisons)
    return report


def _notes(options: FailoverOptions) -> list[str]:
    return [
        f"T = {options.period:g} s, n = {options.events}; probes at {options.rate_hz:g} Hz, "
        f"degraded after {options.samples} probes over {THRESHOLD_MS:g} ms RTT "
        "(a probe unanswered at the threshold counts as over it)",
        f"one-way delays from braid-dp: path switching primary {DELAYS['path-switch']['primary']:g}"
        f" ms, long path {DELAYS['path-switch']['standby']:g} ms; RTT extension primary "
        f"{DELAYS['rtt-extension']['primary']:g} ms, standby "
        f"{DELAYS['rtt-extension']['standby']:g} ms, extended to {EXTENDED_MS:g} ms",
        f"paths of {100 * options.scale:g} Mbit/s; iperf3 CUBIC, one stream, site A → site B",
        f"cut: the primary's link emulator drops every frame for T/2 (no port goes down); "
        f"primary {DELAYS['cut']['primary']:g} ms, standby {DELAYS['cut']['standby']:g} ms; "
        f"ff-bfd: BFD min_tx = min_rx = {options.bfd_ms} ms on the border switches' long-haul "
        "interfaces",
    ]


def _pick(rows: Sequence[dict[str, Any]], method: str, extra: int = 0) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in rows
            if r["method"] == method
            and r["degradation"] == "path-switch"
            and r["extra_flows"] == extra
        ),
        None,
    )


def _floors(rows: Sequence[dict[str, Any]], outage: float | None) -> list[FloorCheck]:
    floors = []
    direct, controller = _pick(rows, "direct"), _pick(rows, "controller")
    if direct is not None and direct["rules_ms"] is not None:
        floors.append(
            FloorCheck(
                "direct: detection → rules in, median", direct["rules_ms"], 50, " ms", at_most=True
            )
        )
    if direct is not None and direct["moved_ms"] is not None:
        floors.append(
            FloorCheck(
                "direct: degradation → traffic on the other path, median",
                direct["moved_ms"],
                300,
                " ms",
                at_most=True,
            )
        )
    if direct and controller and direct["moved_ms"] is not None and controller["moved_ms"]:
        floors.append(
            FloorCheck(
                "controller − direct, traffic on the other path, medians",
                controller["moved_ms"] - direct["moved_ms"],
                100,
                " ms",
                at_most=True,
            )
        )
    if outage is not None:
        floors.append(
            FloorCheck(
                "fast-failover group, link down: longest probe gap", outage, 50, " ms", at_most=True
            )
        )
    heavy = _pick(rows, "direct", 100)
    if direct and heavy and direct["rules_ms"] and heavy["rules_ms"] is not None:
        floors.append(
            FloorCheck(
                "100 extra entries: rules time / without",
                heavy["rules_ms"] / direct["rules_ms"],
                2,
                "×",
                at_most=True,
            )
        )
    return floors


def _findings(rows: Sequence[dict[str, Any]], comparisons: dict[str, Any]) -> list[str]:
    lines = []
    for degradation, result in comparisons.items():
        delays = ", ".join(f"{d:g}" for d in result["relative_delays_s"]) or "none"
        lines.append(
            f"{degradation}: the controller method's TCP recovery minus direct's, per event (s): "
            f"{delays}; traffic on the other path, controller minus direct (ms): "
            f"{', '.join('—' if d is None else f'{d:g}' for d in result['moved_delay_ms'])}"
        )
    lines += _cut_findings(rows)
    for row in rows:
        dead = [p for p, n in (row.get("emulator_frames") or {}).items() if n is None]
        if dead:
            lines.append(
                f"{row['config']}: the link emulator of {', '.join(dead)} was gone "
                "at the end of the run (killed from outside?): the run is suspect"
            )
        spare = [int(n) for n in str(row["actions"]).split(" / ")]
        if any(n > row["events"] for n in spare):
            lines.append(f"{row['config']}: more actions than degradations ({row['actions']})")
    return lines


def _cut_findings(rows: Sequence[dict[str, Any]]) -> list[str]:
    """What each method made of a cut in the middle of the long haul."""
    lines = []
    for row in rows:
        if row["degradation"] != "cut":
            continue
        moved = row["moved_ms_per_event"]
        seen = [m for m in moved if m is not None]
        per_event = ", ".join("—" if m is None else f"{m:g}" for m in moved)
        lines.append(
            f"{row['config']}: cut → traffic on the standby in {len(seen)} of {len(moved)} "
            f"events within {MOVE_WINDOW:g} s (per event, ms: {per_event})"
        )
    for row in rows:
        early = row.get("early_events") or []
        if early:
            lines.append(
                f"{row['config']}: a site had failed over before event(s) "
                f"{', '.join(str(k + 1) for k in early)} came (a false detection): left out "
                "of the medians"
            )
    return lines
