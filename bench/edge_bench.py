"""braid-dp's multipath edge: TCP over two paths of unequal delay, with and without resequencing.

Two edges back to back (`braid.adapters.dataplane.edge_lab`): host a ─ edge A
═ two link emulators on one wire, one per VLAN path ═ edge B ─ host b. Path
101 has 25 ms one way, path 102 25 ms plus an extra delay; both the same
rate. T and the hold time are sized from the delay difference (see
`reseq_settings`). One iperf3 TCP stream from a to b per setting, reported as Mbit/s
against the two paths' sum, with edge B's resequencing counters; the
baseline in the same run is the same stream on path 101 alone (weights
1 and 0). A preview of seed 002's Figure 3 (MDI against aggregated
throughput), not the experiment itself. Needs root, iperf3 and braid-dp
built (`make`). From the repository root:

    .venv/bin/python bench/edge_bench.py            # ~2 min
    .venv/bin/python bench/edge_bench.py --quick    # ~40 s
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from braid.adapters.dataplane import (
    EdgeConfig,
    EdgePath,
    EdgeReservation,
    LinkEmulator,
    LinkSettings,
    MultipathEdge,
    ReseqSettings,
)
from braid.adapters.dataplane.edge_lab import EDGE_HOST_A_IP, EDGE_HOST_B_IP, VLANS, EdgeLab
from braid.core.multipath import mdi

BASE_MS = 25.0
IPERF_PORT = 5279


BURST = 4


def reseq_settings(extra_ms: float, rate_mbps: int) -> ReseqSettings:
    """T from the delay difference at the path rate (MPSDN sizes it from MDI and
    bandwidth): the full-size segments the fast path delivers meanwhile, plus
    two bursts; S twice that; the hold time twice the difference plus 5 ms."""
    segments = rate_mbps * 1e6 * extra_ms / 1e3 / (1500 * 8)
    threshold = int(segments) + 2 * BURST
    return ReseqSettings(
        buffer_size=2 * threshold, threshold=threshold, lrf=20, hold_ms=2 * extra_ms + 5
    )


def edge_config(
    src: str, dst: str, resequence: bool, weights: tuple[float, float], reseq: ReseqSettings
) -> EdgeConfig:
    paths = tuple(EdgePath(vlan=v, weight=w) for v, w in zip(VLANS, weights, strict=True))
    reservation = EdgeReservation(
        id="r1", src=src, dst=dst, paths=paths, burst=BURST, resequence=resequence
    )
    return EdgeConfig(reservations=(reservation,), reseq=reseq)


def iperf_mbps(lab: EdgeLab, seconds: float) -> float:
    server = subprocess.Popen(
        lab.exec_argv(lab.host_b, ["iperf3", "-s", "-1", "-p", str(IPERF_PORT)]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        argv = ["iperf3", "-c", EDGE_HOST_B_IP, "-p", str(IPERF_PORT), "-t", str(seconds), "-J"]
        out = subprocess.run(
            lab.exec_argv(lab.host_a, argv), capture_output=True, text=True, timeout=seconds + 60
        )
        report = json.loads(out.stdout)
        return float(report["end"]["sum_received"]["bits_per_second"]) / 1e6
    finally:
        server.kill()
        server.wait()


def run(
    extra_ms: float, resequence: bool, weights: tuple[float, float], args: Any
) -> dict[str, Any]:
    reseq = reseq_settings(extra_ms, args.rate)
    with EdgeLab.fresh() as lab:
        delays = (BASE_MS, BASE_MS + extra_ms)
        links = [
            LinkEmulator(
                lab.interface("wa"),
                lab.interface("wb"),
                namespace=lab.middle,
                settings=LinkSettings(delay_ms=d, rate=f"{args.rate}M", queue_limit=args.queue),
                vlan=vlan,
                seed=vlan,
            )
            for vlan, d in zip(VLANS, delays, strict=True)
        ]
        edges = [
            MultipathEdge(
                lab.interface(f"{side}1"),
                lab.interface(f"e{side}"),
                edge_config(src, dst, resequence, weights, reseq),
                namespace=lab.middle,
            )
            for side, src, dst in (
                ("a", EDGE_HOST_A_IP, EDGE_HOST_B_IP),
                ("b", EDGE_HOST_B_IP, EDGE_HOST_A_IP),
            )
        ]
        elements = [*links, *edges]
        try:
            for element in elements:
                element.start()
            mbps = iperf_mbps(lab, args.seconds)
            counters = dataclasses.asdict(edges[1].counters().to_host)
        finally:
            for element in elements:
                element.stop()
    keep = ("resequenced", "released_threshold", "released_hold", "old", "flows")
    return {
        "extra_ms": extra_ms,
        "mdi": round(mdi(delays), 3),
        "resequence": resequence,
        "weights": list(weights),
        "threshold": reseq.threshold,
        "hold_ms": reseq.hold_ms,
        "mbps": mbps,
        **{k: counters[k] for k in keep},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer delays, shorter runs")
    parser.add_argument("--rate", type=int, default=10, help="each path's rate, Mbit/s")
    parser.add_argument("--queue", type=int, default=100, help="each path's queue, packets")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    args.seconds = 5.0 if args.quick else 10.0
    extras = [0.0, 25.0] if args.quick else [0.0, 10.0, 25.0, 50.0]
    if os.geteuid() != 0 or not shutil.which("iperf3"):
        print("needs root and iperf3 (apt-get install iperf3)", file=sys.stderr)
        return 2
    print(f"two paths of {args.rate} Mbit/s, {BASE_MS} ms and more; {os.cpu_count()} CPUs")
    rows = [run(0.0, True, (1.0, 0.0), args)]
    print(f"  baseline, path 101 alone: {rows[0]['mbps']:.2f} Mbit/s", flush=True)
    for extra in extras:
        for resequence in (True, False):
            row = run(extra, resequence, (1.0, 1.0), args)
            rows.append(row)
            share = row["mbps"] / (2 * args.rate)
            print(
                f"  second path +{extra:4.0f} ms (MDI {row['mdi']:.3f}), resequencing "
                f"{'on ' if resequence else 'off'}: {row['mbps']:6.2f} Mbit/s "
                f"({share:.0%} of {2 * args.rate}), {row['mbps'] / rows[0]['mbps']:.2f}× one path; "
                f"resequenced {row['resequenced']}, threshold {row['released_threshold']}, "
                f"hold {row['released_hold']}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps({"rate_mbps": args.rate, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
