"""Modify across domains on Chung et al.'s Fig. 6a network, over real gRPC.

The orchestrator and the nine agents of `src/braid/examples/fig6a.yaml` run
as separate processes on loopback. Each round reserves 6 Gbit/s from site A
to site C (split over both WANs: six domains take part), modifies it to
8 Gbit/s (`Orchestrator.Modify`, make-before-break: the new version is
negotiated beside the old bookings, its commit and the old version's release
decided in one synced write, the new version committed in every domain, then
the old one released and acknowledged everywhere), and cancels it, so every
round finds the same room. The modify's latency is printed next to the
create latency of the same run. Afterwards every domain must hold nothing.

    .venv/bin/python bench/modify_bench.py [--rounds 60]
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

G = 10**9
FIRST, THEN = 6 * G, 8 * G


def request(rid: str, start: int) -> pb.Reservation:
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-dtn"),
        destination=pb.Endpoint(domain="site-c", point="c-dtn"),
        bandwidth_bps=FIRST,
        window=pb.Window(start=start, end=start + 3600),
        strategy=pb.STRATEGY_PARTIAL_OFFERS,
        max_paths=2,
    )


def domains_of(reply: pb.ReservationResp) -> int:
    return len({s.domain for p in reply.paths for s in p.segments})


def rounds(cluster: LocalCluster, count: int, prefix: str) -> tuple[list[float], list[float], str]:
    """(reserve ms, modify ms, domains before -> after), one reservation at a time."""
    start = int(time.time()) + 3600
    reserve_ms, modify_ms, domains = [], [], ""
    stub = cluster.orchestrator()
    for i in range(count):
        began = time.perf_counter()
        reply = cluster.reserve(request(f"{prefix}-{i}", start))  # the same window: freed each time
        reserve_ms.append((time.perf_counter() - began) * 1000)
        if not reply.success:
            sys.exit(f"reservation {reply.id} failed: {reply.status} {reply.reason}")
        began = time.perf_counter()
        new = stub.Modify(pb.ModifyQuery(id=reply.id, bandwidth_bps=THEN), timeout=30)
        modify_ms.append((time.perf_counter() - began) * 1000)
        granted = sum(p.bandwidth_bps for p in new.paths)
        if new.status != "committed" or granted != THEN:
            sys.exit(f"modify {i}: {new.status} {granted}")
        if {h.state for h in new.holdings} != {"committed"}:
            sys.exit(f"modify {i}: {list(new.holdings)}")
        domains = f"{domains_of(reply)} -> {domains_of(new)}"
        answer = stub.Cancel(pb.CancelQuery(id=reply.id), timeout=10)
        if answer.status != "cancelled":
            sys.exit(f"cancel {i}: {answer.status}")
    return reserve_ms, modify_ms, domains


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    (reserve_ms, modify_ms, domains), check = on_fig6a(rounds, args.rounds, "m")
    ratio = statistics.median(modify_ms) / statistics.median(reserve_ms)
    print(f"{args.rounds} reservations of 6 Gbit/s modified to 8 Gbit/s, domains {domains}")
    print(f"reserve: median {statistics.median(reserve_ms):.1f} ms, p99 {p99(reserve_ms):.1f} ms")
    print(f"modify:  median {statistics.median(modify_ms):.1f} ms, p99 {p99(modify_ms):.1f} ms")
    print(f"modify / reserve (medians): {ratio:.2f}")
    print(f"ledgers: {check.summary()}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if not check.ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
