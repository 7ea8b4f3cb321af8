"""What every part of `braid emulate packet-split` shares: the two-path network, its cases,
and one run of one TCP transfer over a packet-split reservation (seed 002).

Two paths A-P-B and A-Q-B, each path's one-way delay shared by its two links
(braid-dp link), each link's queue one round trip long at its rate. h1 (at
A) sends to h2 (at B) through braid's edges; h3 (at P) and h4 (at B) only
carry cross traffic (Figure 4's congestion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from braid.adapters.emulation.iperf import ClientOptions, IperfResult
from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.scaling import Scale
from braid.core.model.booking import Allocation
from braid.emulation.host_edges import running_edges
from braid.emulation.session import EMULATOR, EmulationSession, path_of
from braid.emulation.traffic import Flowset, measure

MBPS: Final = 1_000_000
HOSTS: Final = (HostSpec("h1", "A"), HostSpec("h2", "B"), HostSpec("h3", "P"), HostSpec("h4", "B"))
EDGE_HOSTS: Final = ("h1", "h2")
ROUTES: Final = (("A", "P", "B"), ("A", "Q", "B"))
# The sender's TCP as in 2017: no RACK, reordering window fixed at 3 segments.
CLASSIC_TCP: Final = (
    "net.ipv4.tcp_recovery=0",
    "net.ipv4.tcp_reordering=3",
    "net.ipv4.tcp_max_reordering=3",
)
MODERN_TCP: Final = (
    "net.ipv4.tcp_recovery=1",
    "net.ipv4.tcp_reordering=3",
    "net.ipv4.tcp_max_reordering=300",
)


def second_delay(mdi: float, first_ms: float) -> float:
    """The second path's delay giving `mdi` with the first at `first_ms` (seed 002, eq. 1)."""
    return round(first_ms * (0.5 + mdi) / (0.5 - mdi), 3)


def two_paths(rates_bps: tuple[int, int], one_way_ms: tuple[float, float]) -> dict[str, Any]:
    """A-P-B and A-Q-B; each path's delay split over its two links."""
    links = []
    for (a, mid, b), rate, delay in zip(ROUTES, rates_bps, one_way_ms, strict=True):
        for x, y in ((a, mid), (mid, b)):
            links.append(
                {
                    "id": f"{x}-{y}",
                    "a": x,
                    "b": y,
                    "capacity": f"{rate}bps",
                    "latency_ms": delay / 2,
                }
            )
    return {"nodes": [{"id": n} for n in ("A", "P", "Q", "B")], "links": links}


@dataclass(frozen=True, slots=True)
class Case:
    """One network setting: the paths' rates and one-way delays."""

    rates_bps: tuple[int, int]
    one_way_ms: tuple[float, float]

    @property
    def rtt_ms(self) -> float:
        return 2 * max(self.one_way_ms)

    @property
    def mdi(self) -> float:
        return round(max(self.one_way_ms) / sum(self.one_way_ms) - 0.5, 3)


def scaled(mbps: tuple[int, int], scale: Scale) -> tuple[int, int]:
    return (scale.bps(mbps[0] * MBPS), scale.bps(mbps[1] * MBPS))


def set_case(session: EmulationSession, case: Case) -> None:
    """New rates and delays, and queues one round trip long (at least the default 0.1 s)."""
    session.retopologise(two_paths(case.rates_bps, case.one_way_ms))
    for link in session.topology.links.values():
        queue = max(0.1, case.rtt_ms / 1000)
        session.net.set_link_rate(link.id, link.capacity, queue_seconds=queue)


def book(session: EmulationSession, need: int, max_paths: int) -> tuple[str, Any, bool]:
    """A `split: packet` reservation through the service: its id, paths and `resequence`."""
    seen = session.reserve("A", "B", need, 600, max_paths=max_paths, split="packet")
    record = seen.record
    return record.id, record.allocations, bool(record.plan.get("resequence", False))


def path_counters() -> dict[str, tuple[str, str]]:
    """Per path, the counter of what A sends into it (label -> (link, node))."""
    return {f"path {i + 1}": (f"A-{route[1]}", "A") for i, route in enumerate(ROUTES)}


def path_rates(samples: dict[str, list[float]]) -> str:
    """Each path's mean rate over a run (Mbit/s), as `a / b`."""
    return " / ".join(f"{sum(v) / max(len(v), 1):.1f}" for v in samples.values())


def run_split(
    session: EmulationSession,
    case: Case,
    client: ClientOptions,
    *,
    paths: int = 2,
    route: int | None = None,
    resequence: bool | None = None,
    classic: bool = False,
) -> dict[str, Any]:
    """The row of one `split_transfer`."""
    row, _ = split_transfer(
        session, case, client, paths=paths, route=route, resequence=resequence, classic=classic
    )
    return row


def split_transfer(
    session: EmulationSession,
    case: Case,
    client: ClientOptions,
    *,
    paths: int = 2,
    route: int | None = None,
    resequence: bool | None = None,
    classic: bool = False,
) -> tuple[dict[str, Any], IperfResult]:
    """Book (or, with `route`, take that path alone unbooked), compile, install, start the
    edges, one iperf3 client run; cancel. The run's row and iperf3's result."""
    if route is None:
        need = sum(case.rates_bps) if paths == 2 else max(case.rates_bps)
        rid, allocations, planned = book(session, need, paths)
    else:
        path = path_of(session.topology, ROUTES[route])
        rid, planned = f"path-{route + 1}-alone", False
        allocations = (Allocation(path, case.rates_bps[route]),)
    sender = session.net.host("h1")
    sender.cmd("sysctl -qw " + " ".join(CLASSIC_TCP if classic else MODERN_TCP))
    try:
        installed, plan = session.install_packet_split(
            rid, allocations, "h1", "h2", resequence=planned if resequence is None else resequence
        )
        try:
            with running_edges(session, plan.edges) as edges:
                rtt = session.measure_rtt_ms("h1", "h2")
                got = measure(session, [Flowset("f", "h1", "h2", client)], path_counters())
                counters = edges["h2"].counters().to_host
        finally:
            session.uninstall(installed)
    finally:
        if route is None:
            session.service.cancel(EMULATOR, rid)
        sender.cmd("sysctl -qw " + " ".join(MODERN_TCP))
    goodput = got.results["f"].received_mbps
    return {
        "paths_mbps": "+".join(f"{r / MBPS:g}" for r in case.rates_bps),
        "one_way_ms": "/".join(f"{d:g}" for d in case.one_way_ms),
        "mdi": case.mdi,
        "resequence": plan.edges[1].resequence,
        "threshold": plan.edges[1].reseq.threshold,
        "hold_ms": plan.edges[1].reseq.hold_ms,
        "goodput_mbps": round(goodput, 3),
        "reserved_mbps": sum(a.bandwidth for a in allocations) / MBPS,
        "percent_of_sum": round(100 * goodput * MBPS / sum(case.rates_bps), 1),
        "rtt_configured_ms": "/".join(f"{2 * d:g}" for d in used_delays(case, allocations)),
        "rtt_measured_ms": None if rtt is None else round(rtt, 2),
        "resequenced": counters.resequenced,
        "released_threshold": counters.released_threshold,
        "released_hold": counters.released_hold,
        "per_path_mbps": path_rates(got.path_mbps),
    }, got.results["f"]


def used_delays(case: Case, allocations: Sequence[Allocation]) -> list[float]:
    """The one-way delays of the paths the reservation got (by their middle node)."""
    middles = [route[1] for route in ROUTES]
    return [case.one_way_ms[middles.index(a.path.nodes[1])] for a in allocations]
