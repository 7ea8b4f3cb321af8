"""`braid demo`: the multi-domain network of seed 000 Fig. 6a, negotiated live on loopback.

Starts one agent process per domain and the orchestrator process, submits a
few reservations over gRPC, prints each negotiation's trace (offers, Prep
votes, decision, commit) and the final plan, checks every domain's ledger,
and shuts everything down.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from braid.cli.common import fail

if TYPE_CHECKING:
    from braid.adapters.rpc.v1 import negotiation_pb2 as pb
    from braid.bootstrap.local_cluster import LocalCluster

G = 10**9


@dataclass(frozen=True)
class DemoRequest:
    id: str
    story: str
    src: tuple[str, str]
    dst: tuple[str, str]
    gbps: float
    strategy: str
    max_paths: int


REQUESTS = (
    DemoRequest(
        "fits-one-path", "fits one path", ("site-a", "a-dtn"), ("site-c", "c-dtn"), 3,
        "partial-offers", 1,
    ),
    DemoRequest(
        "split-two-wans", "needs a split over both R&E WANs", ("site-b", "b-dtn"),
        ("site-c", "c-dtn"), 10, "full-offers", 2,
    ),
    DemoRequest(
        "via-blind-rn3", "crosses RN3, a blind domain", ("site-a", "a-dtn"),
        ("site-d", "d-dtn"), 4, "partial-offers", 2,
    ),
    DemoRequest(
        "too-big", "more than both WANs have left", ("site-a", "a-dtn"), ("site-c", "c-dtn"),
        30, "partial-offers", 2,
    ),
)  # fmt: skip


def demo(
    topology: Annotated[
        Path | None,
        typer.Option("--topology", "-t", help="Multi-domain topology (default: Fig. 6a)."),
    ] = None,
    emulate: Annotated[
        bool,
        typer.Option(
            "--emulate",
            help="Instead: the service programs a Mininet network (root): rules at the start, "
            "a hitless modify, a clean cancel, with real traffic (braid emulate service --short).",
        ),
    ] = False,
) -> None:
    """Run the orchestrator and one agent per domain of seed 000 Fig. 6a, and negotiate."""
    if emulate:
        from braid.cli.emulate_cmd import service

        service(short=True, strict=True)
        return
    from braid.adapters.rpc.ledgers import check_ledgers, committed_of
    from braid.bootstrap.local_cluster import LocalCluster

    example = resources.files("braid.examples") / "fig6a.yaml"
    with (
        tempfile.TemporaryDirectory(prefix="braid-demo-") as workdir,
        resources.as_file(example) as default_path,
    ):
        cluster = LocalCluster(topology or Path(default_path), Path(workdir))
        try:
            cluster.start()
        except Exception as exc:
            fail(f"cannot start the demo network: {exc}")
        try:
            for process in cluster.processes.values():
                typer.echo(f"  started {process.banner}")
            results = [_negotiate(cluster, request) for request in REQUESTS]
            _print_plan(results)
            check = check_ledgers(cluster.reports(), committed_of(results))
            typer.echo(f"\nchecker: {check.summary()}")
        finally:
            popens = [p.popen for p in cluster.processes.values()]
            cluster.stop()
        stray = [p.pid for p in popens if p.poll() is None]
        typer.echo(
            f"stopped {len(popens)} processes" + (f"; still running: {stray}" if stray else "")
        )
    if not check.ok or stray:
        raise typer.Exit(1)


def _negotiate(cluster: LocalCluster, request: DemoRequest) -> pb.ReservationResp:
    from braid.adapters.rpc.v1 import negotiation_pb2 as pb

    strategies = {
        "equal-split": pb.STRATEGY_EQUAL_SPLIT,
        "partial-offers": pb.STRATEGY_PARTIAL_OFFERS,
        "full-offers": pb.STRATEGY_FULL_OFFERS,
    }
    now = int(time.time())
    message = pb.Reservation(
        id=request.id,
        source=pb.Endpoint(domain=request.src[0], point=request.src[1]),
        destination=pb.Endpoint(domain=request.dst[0], point=request.dst[1]),
        bandwidth_bps=int(request.gbps * G),
        window=pb.Window(start=now + 300, end=now + 3900),
        strategy=strategies[request.strategy],
        max_paths=request.max_paths,
    )
    typer.echo(
        f"\n== {request.id}: {request.gbps:g} Gbit/s {request.src[0]} -> {request.dst[0]}"
        f" ({request.story}; {request.strategy}, up to {request.max_paths} path(s))"
    )
    started = time.perf_counter()
    reply = cluster.reserve(message)
    elapsed = (time.perf_counter() - started) * 1000
    for event in reply.trace:
        who = f"{event.domain}: " if event.domain else ""
        typer.echo(f"  [{event.phase:<7}] {who}{event.text}")
    verdict = "COMMITTED" if reply.success else f"FAILED ({reply.reason})"
    typer.echo(f"  => {verdict} in {elapsed:.1f} ms")
    return reply


def _print_plan(results: list[pb.ReservationResp]) -> None:
    typer.echo("\nfinal plan")
    for reply in results:
        if not reply.success:
            typer.echo(f"  {reply.id}: failed, nothing held")
            continue
        total = sum(p.bandwidth_bps for p in reply.paths) / G
        typer.echo(f"  {reply.id}: {total:g} Gbit/s over {len(reply.paths)} path(s)")
        for path in reply.paths:
            hops = " > ".join(s.domain for s in path.segments)
            vlans = ", ".join(f"{v.link}={v.vlan}" for v in path.vlans)
            typer.echo(f"    {path.bandwidth_bps / G:g} Gbit/s  {hops}  [VLANs {vlans}]")
        for switch in reply.switches:
            typer.echo(f"    rules {_switch_line(switch)}")


def _switch_line(switch: pb.SwitchPlan) -> str:
    """`switch (domain): p1/v100 -> {p2/v1000 w3, p3/v1100 w2}; ...` (port/VLAN, weights)."""

    def way(port: int, vlan: int) -> str:
        return f"p{port}/{f'v{vlan}' if vlan else 'untagged'}"

    parts = []
    for rule in switch.rules:
        ways = [way(w.port, w.vlan) for w in rule.ways]
        if len(ways) > 1:
            weighted = zip(ways, rule.ways, strict=True)
            target = "{" + ", ".join(f"{t} w{w.weight}" for t, w in weighted) + "}"
        else:
            target = ways[0]
        parts.append(f"{way(rule.in_port, rule.vlan)} -> {target}")
    return f"{switch.switch} ({switch.domain}): " + "; ".join(parts)
