"""Cancel across domains on Chung et al.'s Fig. 6a network, over real gRPC.

The orchestrator and the nine agents of `src/braid/examples/fig6a.yaml` run
as separate processes on loopback. Each round reserves 15 Gbit/s from site A
to site C (more than one WAN carries, so it splits over both: six domains
take part) and then cancels it; the cancel's latency is timed end to end
(`Orchestrator.Cancel`: the release logged and synced, then sent to every
domain and acknowledged). Afterwards every domain must hold nothing.

    .venv/bin/python bench/cancel_bench.py [--rounds 60]

Floor (issue 12): median cancel of a 6-domain reservation <= 20 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from fig6a_rounds import on_fig6a, p99

FLOOR_MEDIAN_MS = 20.0
G = 10**9


def request(rid: str, start: int) -> pb.Reservation:
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-dtn"),
        destination=pb.Endpoint(domain="site-c", point="c-dtn"),
        bandwidth_bps=15 * G,
        window=pb.Window(start=start, end=start + 3600),
        strategy=pb.STRATEGY_PARTIAL_OFFERS,
        max_paths=2,
    )


def rounds(cluster: LocalCluster, count: int, prefix: str) -> tuple[list[float], list[float], int]:
    """(reserve ms, cancel ms, domains per reservation), one reservation at a time."""
    start = int(time.time()) + 3600
    reserve_ms, cancel_ms, domains = [], [], 0
    stub = cluster.orchestrator()
    for i in range(count):
        began = time.perf_counter()
        reply = cluster.reserve(request(f"{prefix}-{i}", start))  # the same window: freed each time
        reserve_ms.append((time.perf_counter() - began) * 1000)
        if not reply.success:
            sys.exit(f"reservation {reply.id} failed: {reply.status} {reply.reason}")
        domains = len({s.domain for p in reply.paths for s in p.segments})
        began = time.perf_counter()
        answer = stub.Cancel(pb.CancelQuery(id=reply.id), timeout=10)
        cancel_ms.append((time.perf_counter() - began) * 1000)
        if answer.status != "cancelled" or {h.state for h in answer.holdings} != {"released"}:
            sys.exit(f"cancel {i}: {answer.status} {list(answer.holdings)}")
    return reserve_ms, cancel_ms, domains


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    (reserve_ms, cancel_ms, domains), check = on_fig6a(rounds, args.rounds, "c")
    median = statistics.median(cancel_ms)
    print(f"{args.rounds} reservations of 15 Gbit/s over {domains} domains, each then cancelled")
    print(f"reserve: median {statistics.median(reserve_ms):.1f} ms, p99 {p99(reserve_ms):.1f} ms")
    print(f"cancel:  median {median:.1f} ms, p99 {p99(cancel_ms):.1f} ms")
    print(f"ledgers: {check.summary()}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    verdict = "meets" if median <= FLOOR_MEDIAN_MS else "MISSES"
    print(f"floor: median cancel <= {FLOOR_MEDIAN_MS:g} ms: {verdict}")
    if not check.ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
