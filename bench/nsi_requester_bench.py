"""braid as an NSI requester: interdomain reservations through a real OpenNSA domain.

Starts OpenNSA (its dud backend on PostgreSQL; `../shared/peers/opennsa/run-opennsa`
from the repository's root), two `braid agent` processes (sites a and b) and a
`braid orchestrator` whose topology has OpenNSA as the domain of kind `nsi`
between them, all on loopback. Each cycle reserves 100 Mbit/s from site a to
site b (Prep at both agents and a reserve at OpenNSA, held, then committed
everywhere and provisioned at OpenNSA) and cancels it (released at the agents,
terminated at OpenNSA), one at a time; both are timed as the orchestrator's gRPC caller sees them.

    .venv/bin/python bench/nsi_requester_bench.py [--cycles 20]

Floors (issue 17): 0 reservations left held or active afterwards, in braid (the
agents' holds) and in OpenNSA (asked with its own CLI `onsa` as braid's
requester NSA). The exit status is 1 if a cycle failed or a floor is missed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import yaml

from braid.adapters.free_ports import free_port
from braid.adapters.rpc.ledgers import check_ledgers
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from braid.testing.opennsa import (
    NARROW_NRM,
    Onsa,
    opennsa_peer,
    peer_script,
    requester_network,
)

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = "onsa-bench.test"
REQUESTER = "braid-bench.test:nsa"  # onsa prefixes urn:ogf:network:


def _request(rid: str) -> pb.Reservation:
    now = int(time.time())
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=100 * 10**6,
        window=pb.Window(start=now + 120, end=now + 3600),
        max_paths=1,
    )


def cycles(cluster: LocalCluster, count: int) -> tuple[list[float], list[float]]:
    """Milliseconds of each Reserve (committed) and each Cancel (cancelled)."""
    reserves, cancels = [], []
    for _ in range(count):
        rid = f"bench-{uuid.uuid4().hex[:10]}"
        began = time.perf_counter()
        reply = cluster.reserve(_request(rid), timeout=60)
        reserves.append((time.perf_counter() - began) * 1000)
        if not reply.success:
            raise RuntimeError(f"{rid} refused: {reply.reason}")
        began = time.perf_counter()
        answer = cluster.orchestrator().Cancel(pb.CancelQuery(id=rid), timeout=60)
        cancels.append((time.perf_counter() - began) * 1000)
        if answer.status != "cancelled":
            raise RuntimeError(f"{rid} not cancelled: {answer.status}")
    return reserves, cancels


def _line(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"{name:<40} median {statistics.median(values):7.1f} ms   p90 {p90:7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=20, help="reserve + cancel cycles")
    args = parser.parse_args()
    script = peer_script(ROOT)
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        (workdir / "peer").mkdir()
        nrm = workdir / "ports.nrm"
        nrm.write_text(NARROW_NRM, encoding="utf-8")
        with opennsa_peer(script, workdir / "peer", DOMAIN, nrm=nrm) as url:
            network = requester_network(url, DOMAIN, f"urn:ogf:network:{REQUESTER}")
            (workdir / "net.yaml").write_text(yaml.safe_dump(network, sort_keys=False))
            with LocalCluster(
                workdir / "net.yaml", workdir / "run", orchestrator_args=["--timeout", "30"]
            ) as cluster:
                reserves, cancels = cycles(cluster, args.cycles)
                check = check_ledgers(cluster.reports(), {})
            onsa = Onsa(script, url, f"{DOMAIN}:nsa", free_port(), requester=REQUESTER)
            listed = onsa.run("query").all_states()
    live = [s for s in listed if s[0] == "ReserveHeld" or s[2] != "Terminated"]
    print(f"{args.cycles} cycles: site-a -> OpenNSA (kind nsi) -> site-b, loopback")
    print(_line("Reserve (committed in all three)", reserves))
    print(_line("Cancel (terminated at OpenNSA)", cancels))
    print(f"left held or active in braid:   {len(check.held)} held, {len(check.wrong)} booked")
    print(f"left held or active in OpenNSA: {len(live)} of {len(listed)} connections")
    return 0 if check.ok and not live and len(listed) == args.cycles else 1


if __name__ == "__main__":
    raise SystemExit(main())
