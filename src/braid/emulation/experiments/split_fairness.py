"""Intra-flow fairness of seed 002 (§IV-A3): Jain's index over ten TCP flows, each second.

MPSDN started ten 30-second iperf transfers over its network, took each
flow's throughput every second and Jain's index of the ten: mean 0.81
(sigma 0.042). Here: ten iperf3 streams over one packet-split reservation
of Table II's first network (two 10 Mbit/s paths, 95 ms), and, as the
baseline, the same ten streams over a flow-split reservation of the same
paths (Open vSwitch's select group hashes each flow onto one path). A
flow's rate each second is iperf3's per-stream interval report (the
sender's, written in 8 KiB blocks).
"""

from __future__ import annotations

import statistics
from typing import Any, Final

from braid.adapters.emulation.iperf import ClientOptions, IperfResult
from braid.core.multipath.fairness import jain_index
from braid.emulation.host_edges import passing_edges
from braid.emulation.report import Progress, Report
from braid.emulation.session import EmulationSession
from braid.emulation.split_lab import (
    EDGE_HOSTS,
    MBPS,
    Case,
    path_counters,
    path_rates,
    set_case,
    split_transfer,
)
from braid.emulation.traffic import Flowset, measure

__all__ = ["PAPER_JAIN", "fairness_of", "run_fairness"]

PART: Final = "Fairness"
PAPER_JAIN: Final = 0.81
FLOWS: Final = 10
# iperf3's default 128 KiB writes are half a second of a 2 Mbit/s flow: a flow's rate per
# second would jump by whole writes. 8 KiB writes resolve it to a few percent.
BLOCK_BYTES: Final = 8192


def fairness_of(result: IperfResult) -> list[float]:
    """Jain's index of the streams' rates, per reported interval."""
    return [round(jain_index(rates), 4) for rates in result.interval_stream_bps if rates]


def run_fairness(
    session: EmulationSession,
    case: Case,
    client: ClientOptions,
    report: Report,
    progress: Progress,
    *,
    baseline: bool,
) -> None:
    set_case(session, case)
    ten = ClientOptions(client.seconds, streams=FLOWS, omit=client.omit, block_bytes=BLOCK_BYTES)
    series: dict[str, Any] = {}
    progress.step(f"{PART}: {FLOWS} flows, packet split")
    results = {"braid packet split": _split(session, case, ten)}
    if baseline:
        progress.step(f"{PART}: {FLOWS} flows, per-flow hashing")
        results["per-flow hashing"] = _hashed(session, case, ten)
    for mode, (result, per_path) in results.items():
        indices = fairness_of(result)
        mean = statistics.fmean(indices) if indices else 0.0
        sd = statistics.pstdev(indices) if len(indices) > 1 else 0.0
        series[mode] = {"t": list(result.interval_ends[: len(indices)]), "jain": indices}
        report.rows.append({
            "part": PART, "case": f"{FLOWS} flows, 2 x 10 Mbit/s, 95 ms", "mode": mode,
            "paper_jain": PAPER_JAIN if mode.startswith("braid") else None,
            "jain_mean": round(mean, 3), "jain_sd": round(sd, 3),
            "goodput_mbps": round(result.received_mbps, 3),
            "percent_of_sum": round(100 * result.received_bps / sum(case.rates_bps), 1),
            "detail": f"Jain {mean:.2f} (sd {sd:.3f}) over {len(indices)} s; "
                      f"per path {per_path} Mbit/s",
        })  # fmt: skip
        report.findings.append(
            f"Fairness, {mode}: Jain's index {mean:.2f} (sd {sd:.3f}) over {FLOWS} flows, "
            f"each second (MPSDN: {PAPER_JAIN}, sd 0.042); aggregate "
            f"{result.received_mbps:.1f} of {sum(case.rates_bps) / MBPS:g} Mbit/s"
        )
    report.series["fairness"] = series


def _split(session: EmulationSession, case: Case, client: ClientOptions) -> tuple[IperfResult, str]:
    row, result = split_transfer(session, case, client)
    return result, row["per_path_mbps"]


def _hashed(
    session: EmulationSession, case: Case, client: ClientOptions
) -> tuple[IperfResult, str]:
    with passing_edges(session, EDGE_HOSTS):
        installed = session.reserve_and_install("h1", "h2", sum(case.rates_bps), 600, max_paths=2)
        try:
            got = measure(session, [Flowset("f", "h1", "h2", client)], path_counters())
        finally:
            session.cancel(installed)
    return got.results["f"], path_rates(got.path_mbps)
