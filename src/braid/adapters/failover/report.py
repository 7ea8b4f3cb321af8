"""The impulse-response analysis as JSON (rates in Mbit/s, times in seconds)."""

from __future__ import annotations

from typing import Any

from braid.core.impulse import Comparison, ImpulseAnalysis

__all__ = ["analysis_json", "comparison_json"]

_TIMINGS = ("detect", "switch", "dip", "recovery")


def _mbps(values: tuple[float, ...] | None) -> list[float] | None:
    return None if values is None else [round(v / 1e6, 6) for v in values]


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def analysis_json(run: ImpulseAnalysis) -> dict[str, Any]:
    return {
        "period_s": run.period,
        "step_s": run.step,
        "lead_s": run.lead,
        "peak_mbps": run.peak / 1e6,
        "events": [
            {
                "degraded": e.degraded,
                "pre_rate_mbps": round(e.pre_rate / 1e6, 6),
                **{f"{name}_s": _seconds(getattr(e, name)) for name in _TIMINGS},
            }
            for e in run.events
        ],
        "median_s": {name: _seconds(run.median(name)) for name in _TIMINGS},
        "offsets_s": [round(o, 6) for o in run.offsets],
        "mean_mbps": _mbps(run.mean),
        "band_low_mbps": _mbps(run.band_low),
        "band_high_mbps": _mbps(run.band_high),
        "responses_mbps": [_mbps(e.response) for e in run.events],
    }


def comparison_json(result: Comparison) -> dict[str, Any]:
    return {
        "relative_delays_s": [round(d, 6) for d in result.delays],
        "median_s": _seconds(result.median),
        "unpaired_events": result.unpaired,
        "histogram": {"edges_s": list(result.edges), "counts": list(result.counts)},
    }
