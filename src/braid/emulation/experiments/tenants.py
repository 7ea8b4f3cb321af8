"""`braid emulate tenants`: two tenants on TALON's 7-switch network (seed 004 §IV).

Both tenants route S1 -> S7 over path 0 (S1-S2-S7) and ask for the same
throughput (200 Mbit/s in the paper), each as ten TCP flows of a tenth of it
(iperf3 -b per stream). Without throughput allocation (the plain network
hypervisor of the paper's baseline) both run on path 0 and share it; with
braid, each request goes through braid's tenant allocator (the `braid plan`
way in: `Planner` via `decide_line`), which keeps the first tenant on its
main path and gives the second what path 0 has left plus a sub-path. Each
tenant's flows are placed on its paths in proportion to their shares.

The topology is braid's reading of the paper's Fig. 5a (the one in
tests/unit/core/tenants/test_tenants.py): three S1 -> S7 paths, 300 Mbit/s per link.
TALON declares no delays (a data-centre testbed); braid's tenants share
long-haul research paths, so every link gets 15 ms one way (braid-dp link):
the two three-hop sub-paths have seed 000's 90 ms round trip, the main
path 60 ms.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Final, Self

from braid.adapters.emulation.iperf import ClientOptions
from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.scaling import Scale
from braid.app.planning import decide_line
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.planning.decisions import TenantReserved, reason_of
from braid.core.planning.planner import Planner
from braid.emulation.flow_counts import fit_flows, placements, wire_factor
from braid.emulation.options import RunOptions
from braid.emulation.report import FloorCheck, Progress, Report, Silent, host_load_note
from braid.emulation.session import EmulationSession, SessionOptions, path_of
from braid.emulation.traffic import Flowset, Measurement, measure

MBPS: Final = 1_000_000
PATHS: Final = {
    "path 0": ("S1", "S2", "S7"),
    "path 1": ("S1", "S3", "S4", "S7"),
    "path 2": ("S1", "S5", "S6", "S7"),
}
LINK_MBPS: Final = 300
LINK_ONE_WAY_MS: Final = 15.0  # three links: seed 000's 90 ms round trip
REQUIREMENT_MBPS: Final = 200
FLOWS_PER_TENANT: Final = 10
FLOOR_PCT: Final = 98.0
BLOCK_BYTES: Final = 8192  # iperf3's default 128 KiB is a quarter second of a 4 Mbit/s stream
TENANTS: Final = {"T1": ("h1", "h2", 5201), "T2": ("h3", "h4", 5202)}


@dataclass(kw_only=True)
class TenantOptions(RunOptions):
    scale: float = 0.1
    seconds: float = 20.0
    timeline: bool = True  # also run the staggered start of the paper's Fig. 8

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        return replace(super().short(session), seconds=3.0)


def talon_topology(link_bps: int) -> dict[str, Any]:
    links = [(a, b) for path in PATHS.values() for a, b in pairwise(path)]
    return {
        "nodes": [{"id": f"S{i}"} for i in range(1, 8)],
        "links": [
            {
                "id": f"{a}-{b}",
                "a": a,
                "b": b,
                "capacity": f"{link_bps}bps",
                "latency_ms": LINK_ONE_WAY_MS,
            }
            for a, b in links
        ],
    }


class _Tenancy:
    """The tenant requests as braid plans them, and their rules in the switches."""

    def __init__(self, session: EmulationSession, requirement: int) -> None:
        self.session = session
        self.requirement = requirement
        self.planner = Planner(session.topology)
        self.lines = 0
        self.decisions: dict[str, TenantReserved] = {}
        self.first_ports = {t: session.ports.take(FLOWS_PER_TENANT) for t in TENANTS}
        self.factor = wire_factor(session.options.mtu)
        self.held: dict[str, tuple[Allocation, ...]] = {}

    def allocate(self, tenant: str) -> tuple[Allocation, ...]:
        """Book through braid's tenant allocator; install the tenant's rules."""
        self.lines += 1
        request_id = f"{tenant}-{self.lines}"
        request = {
            "id": request_id,
            "mode": "tenant",
            "tenant": tenant,
            "src": "S1",
            "dst": "S7",
            "bandwidth": f"{math.ceil(self.requirement * self.factor)}bps",
            "start": int(time.time()),
            "main_path": list(PATHS["path 0"]),
        }
        decision = decide_line(self.planner, json.dumps(request), self.lines)
        if not isinstance(decision, TenantReserved):
            raise RuntimeError(f"braid did not book {tenant}: {reason_of(decision)}")
        self.decisions[tenant] = decision
        allocations = self.planner.tenants.state(request_id).allocations
        self.install(tenant, allocations, booked=True)
        return allocations

    def install(self, tenant: str, allocations: Sequence[Allocation], *, booked: bool) -> None:
        src, dst, _ = TENANTS[tenant]
        self.held[tenant] = tuple(allocations)
        flow_bps = self.requirement / FLOWS_PER_TENANT * self.factor
        counts = fit_flows(
            FLOWS_PER_TENANT,
            flow_bps,
            [a.bandwidth for a in allocations],
            [self._spare(a.path) for a in allocations],
        )
        self.session.install(
            f"{tenant}-rules",
            allocations,
            src,
            dst,
            pinned=placements(counts, self.first_ports[tenant]),
            booked=booked,
        )

    def _spare(self, path: Path) -> int:
        """What no tenant has booked on the path's tightest link."""
        links = self.session.topology.links
        return min(
            links[link].capacity
            - sum(a.bandwidth for held in self.held.values() for a in held if link in a.path.links)
            for link in path.links
        )


def run_tenants(options: TenantOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    scale = Scale(options.scale)
    requirement = scale.bps(REQUIREMENT_MBPS * MBPS)
    report = _new_report(options, scale, requirement)
    hosts = [
        HostSpec(h, node) for h, node in (("h1", "S1"), ("h2", "S7"), ("h3", "S1"), ("h4", "S7"))
    ]
    counters = {name: (f"{nodes[0]}-{nodes[1]}", "S1") for name, nodes in PATHS.items()}
    progress.start(3 if options.timeline else 2, "tenants")
    topology = talon_topology(scale.bps(LINK_MBPS * MBPS))
    with EmulationSession(topology, hosts, options.session) as session:
        progress.step("shared main path (no allocation)")
        shared = _Tenancy(session, requirement)
        path0 = (Allocation(path_of(session.topology, PATHS["path 0"]), requirement),)
        for tenant in TENANTS:
            shared.install(tenant, path0, booked=False)
        got = measure(session, _flowsets(options, shared), counters)
        _rows(report, "shared main path", got, requirement, {t: path0 for t in TENANTS})
        session.uninstall_all()
        progress.step("braid tenant allocation")
        braid = _Tenancy(session, requirement)
        held = {tenant: braid.allocate(tenant) for tenant in TENANTS}
        got = measure(session, _flowsets(options, braid), counters)
        _rows(report, "braid", got, requirement, held)
        session.uninstall_all()
        if options.timeline:
            progress.step("timeline: T2 arrives a third of the way in")
            _timeline(session, options, requirement, counters, report)
        report.notes.append(session.datapath_note())
        report.notes.append(session.rtt_note())
    report.notes.append(host_load_note())
    _judge(report)
    return report


def _flowsets(
    options: TenantOptions,
    tenancy: _Tenancy,
    delays: dict[str, float] | None = None,
) -> list[Flowset]:
    out = []
    requirement = tenancy.requirement
    for tenant, (src, dst, server_port) in TENANTS.items():
        delay = (delays or {}).get(tenant, 0.0)
        client = ClientOptions(
            seconds=options.seconds - delay,
            streams=FLOWS_PER_TENANT,
            omit=options.omit,
            rate_bps=requirement // FLOWS_PER_TENANT,
            block_bytes=BLOCK_BYTES,
            server_port=server_port,
            first_port=tenancy.first_ports[tenant],
        )
        out.append(Flowset(tenant, src, dst, client, delay=delay))
    return out


def _timeline(
    session: EmulationSession,
    options: TenantOptions,
    requirement: int,
    counters: dict[str, tuple[str, str]],
    report: Report,
) -> None:
    braid = _Tenancy(session, requirement)
    braid.allocate("T1")
    arrival = round(options.seconds / 3, 1)
    flowsets = _flowsets(options, braid, {"T2": arrival})

    def arrive() -> None:
        braid.allocate("T2")  # as T2's controller routes its first flow

    flowsets[1] = Flowset(
        "T2", flowsets[1].client, flowsets[1].server, flowsets[1].options,
        delay=arrival, before=arrive,
    )  # fmt: skip
    got = measure(session, flowsets, counters)
    session.uninstall_all()
    report.series["timeline"] = {
        "t2_arrival_s": arrival,
        "times_s": got.times,
        "path_mbps": got.path_mbps,
        "tenant_interval_mbps": {
            t: [round(b / MBPS, 3) for b in r.interval_bps] for t, r in got.results.items()
        },
    }


def _rows(
    report: Report,
    mode: str,
    got: Measurement,
    requirement: int,
    held: dict[str, tuple[Allocation, ...]],
) -> None:
    for tenant, result in sorted(got.results.items()):
        report.rows.append(
            {
                "mode": mode,
                "tenant": tenant,
                "paths": " + ".join(
                    f"{'-'.join(a.path.nodes)} {a.bandwidth / MBPS:g}" for a in held[tenant]
                ),
                "required_mbps": requirement / MBPS,
                "goodput_mbps": round(result.received_mbps, 3),
                "percent": round(100 * result.received_bps / requirement, 2),
            }
        )
    report.series.setdefault("paths", {})[mode] = {
        k: round(sum(v[1:-1]) / max(len(v) - 2, 1), 3) for k, v in got.path_mbps.items()
    }


def _new_report(options: TenantOptions, scale: Scale, requirement: int) -> Report:
    return Report(
        experiment="tenants",
        notes=[
            "seed 004 §IV: two tenants S1 -> S7 on the 7-switch network of its Fig. 5a, ten "
            "TCP flows each, both asking the same throughput; braid's tenant allocation vs "
            "the plain shared main path",
            scale.note() + f": each tenant asks {requirement / MBPS:g} Mbit/s as "
            f"{FLOWS_PER_TENANT} flows of {requirement / FLOWS_PER_TENANT / MBPS:g} Mbit/s; "
            f"links {scale.bps(LINK_MBPS * MBPS) / MBPS:g} Mbit/s",
            f"{options.seconds:g} s per run after {options.omit} s of warm-up (iperf3 -O); "
            f"MTU {options.session.mtu}; driver {options.session.driver}; TCP CUBIC",
            "braid books each requirement plus framing overhead (the link rate that carries "
            "that goodput); a tenant's flows go to its paths in whole flows, never more on a "
            "path than its share carries, the rest where capacity is unbooked",
        ],
        columns=[
            ("mode", "allocation"),
            ("tenant", "tenant"),
            ("paths", "paths (Mbit/s booked)"),
            ("required_mbps", "required (Mbit/s)"),
            ("goodput_mbps", "goodput (Mbit/s)"),
            ("percent", "% of requirement"),
        ],
    )


def _judge(report: Report) -> None:
    for row in report.rows:
        if row["mode"] == "braid":
            report.floors.append(
                FloorCheck(f"{row['tenant']} with braid", row["percent"], FLOOR_PCT)
            )
    shared = {r["tenant"]: r["goodput_mbps"] for r in report.rows if r["mode"] != "braid"}
    for row in report.rows:
        if row["mode"] == "braid" and shared.get(row["tenant"]):
            gain = row["goodput_mbps"] / shared[row["tenant"]]
            report.findings.append(
                f"{row['tenant']}: {gain:.2f}x the shared-path throughput "
                "(TALON reported 2.08x and 2.29x)"
            )
