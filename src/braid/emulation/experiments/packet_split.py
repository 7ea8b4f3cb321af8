"""`braid emulate packet-split`: one TCP flow split packet by packet over two paths (seed 002).

MPSDN (seed 002) spreads each packet of a flow over several paths by
weighted round robin and puts the flow back in order at the receiving edge.
Here braid books a `split: packet` reservation through its service, compiles
it to label rules plus one edge configuration per host, installs the rules
and runs `braid-dp edge` in front of each host (`host_edges`). Two paths
A-P-B and A-Q-B, each path's one-way delay shared by its two links (braid-dp
link), each link's queue one round trip long at its rate (a long-haul
router's buffer: shorter queues keep one CUBIC flow well under the rate at
these round trips). One iperf3 stream per run.

- Table II: two 10 Mbit/s paths at 95 ms, and 10 + 20 Mbit/s at 60 ms
  (the table's latency taken as each path's one-way delay), against the
  best path alone through the same edges.
- Figure 3: 10 + 10 Mbit/s, the first path at 25 ms, the second longer for
  MDI 0 to 0.3, with and without resequencing; and both again with the
  sender's reordering tolerance of 2017's kernels (no RACK, a reordering
  window fixed at 3 segments), closer to the regime MPSDN measured.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final, Self

from braid.adapters.emulation.iperf import ClientOptions
from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.scaling import Scale
from braid.emulation.host_edges import edge_ready_hosts, running_edges
from braid.emulation.options import RunOptions
from braid.emulation.report import (
    FloorCheck,
    Progress,
    Report,
    Silent,
    host_load_note,
    median_trial,
)
from braid.emulation.session import EMULATOR, EmulationSession, SessionOptions
from braid.emulation.traffic import Flowset, measure

MBPS: Final = 1_000_000
HOSTS: Final = (HostSpec("h1", "A"), HostSpec("h2", "B"))
ROUTES: Final = (("A", "P", "B"), ("A", "Q", "B"))
# seed 002 Table II: path rates (Mbit/s), latency (ms), the paper's throughput (Mbit/s).
TABLE2: Final = {
    "2 x 10 Mbit/s, 95 ms": ((10, 10), 95.0, 18.2),
    "10 + 20 Mbit/s, 60 ms": ((10, 20), 60.0, 26.8),
}
FIG3_BASE_MS: Final = 25.0
FIG3_MBPS: Final = (10, 10)
MDIS: Final = (0.0, 0.1, 0.2, 0.3)
FLOOR_PCT: Final = 95.0
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


@dataclass(kw_only=True)
class PacketSplitOptions(RunOptions):
    scale: float = 1.0
    seconds: float = 15.0  # seed 002 Fig. 3: "15-seconds iperf"
    omit: int = 3
    table: tuple[str, ...] = tuple(TABLE2)
    mdis: tuple[float, ...] = MDIS
    classic_tcp: bool = True  # also run Figure 3 on 2017's TCP
    trials: int = 3  # Table II: the median of these
    baseline: bool = True  # Table II's best single path alone

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        brief = super().short(session)
        return replace(
            brief,
            seconds=3.0,
            omit=1,
            table=(next(iter(TABLE2)),),
            mdis=(0.2,),
            classic_tcp=False,
            baseline=False,
        )

    @classmethod
    def of(cls, session: SessionOptions, short: bool) -> Self:
        # Accurate delays matter here (MDI is a delay ratio): real-time link emulators.
        return super().of(replace(session, realtime=True), short)


def second_delay(mdi: float, first_ms: float = FIG3_BASE_MS) -> float:
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


def run_packet_split(options: PacketSplitOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    scale = Scale(options.scale)
    report = _new_report(options, scale)
    cases = [
        (n, Case(_rates(r, scale), (d, d))) for n, (r, d, _) in TABLE2.items() if n in options.table
    ]
    fig3 = [
        (m, Case(_rates(FIG3_MBPS, scale), (FIG3_BASE_MS, second_delay(m)))) for m in options.mdis
    ]
    table_modes = ("braid packet split", "best single path")[: 2 if options.baseline else 1]
    runs = len(table_modes) * len(cases) + len(fig3) * (4 if options.classic_tcp else 2)
    progress.start(runs, "packet-split")
    first = (cases or fig3)[0][1]
    with EmulationSession(
        two_paths(first.rates_bps, first.one_way_ms), HOSTS, options.session
    ) as s:
        edge_ready_hosts(s, [h.name for h in HOSTS])
        for name, case in cases:
            _set_case(s, case)
            for mode in table_modes:
                progress.step(f"Table II, {name}: {mode}")
                paths = 2 if mode.startswith("braid") else 1
                trials = [_run(s, options, case, paths=paths) for _ in range(options.trials)]
                row = median_trial(trials, "goodput_mbps")
                paper = TABLE2[name][2]
                report.rows.append({"part": "Table II", "case": name, "mode": mode,
                                    "paper_mbps": paper if mode.startswith("braid") else None,
                                    "paper_pct": round(100 * paper / sum(TABLE2[name][0]), 1)
                                    if mode.startswith("braid") else None, **row})  # fmt: skip
        for mdi, case in fig3:
            _set_case(s, case)
            modes = [("with resequencing", True, False), ("without resequencing", False, False)]
            if options.classic_tcp:
                modes += [
                    ("with resequencing, 2017 TCP", True, True),
                    ("without resequencing, 2017 TCP", False, True),
                ]
            for mode, reseq, classic in modes:
                progress.step(f"Figure 3, MDI {mdi:g}: {mode}")
                row = _run(s, options, case, paths=2, resequence=reseq, classic=classic)
                report.rows.append({"part": "Figure 3", "case": f"MDI {mdi:g}", "mode": mode,
                                    "paper_mbps": None, "paper_pct": None, **row})  # fmt: skip
        report.notes.append(s.datapath_note())
    report.notes.append(host_load_note())
    _judge(report)
    return report


def _rates(mbps: tuple[int, int], scale: Scale) -> tuple[int, int]:
    return (scale.bps(mbps[0] * MBPS), scale.bps(mbps[1] * MBPS))


def _set_case(session: EmulationSession, case: Case) -> None:
    """New rates and delays, and queues one round trip long (at least the default 0.1 s)."""
    session.retopologise(two_paths(case.rates_bps, case.one_way_ms))
    for link in session.topology.links.values():
        queue = max(0.1, case.rtt_ms / 1000)
        session.net.set_link_rate(link.id, link.capacity, queue_seconds=queue)


def _book(session: EmulationSession, need: int, max_paths: int) -> tuple[str, Any, bool]:
    """A `split: packet` reservation through the service: its id, paths and `resequence`."""
    seen = session.reserve("A", "B", need, 600, max_paths=max_paths, split="packet")
    record = seen.record
    return record.id, record.allocations, bool(record.plan.get("resequence", False))


def _run(
    session: EmulationSession,
    options: PacketSplitOptions,
    case: Case,
    *,
    paths: int,
    resequence: bool | None = None,
    classic: bool = False,
) -> dict[str, Any]:
    """Book, compile, install, start the edges, one iperf3 stream; cancel."""
    need = sum(case.rates_bps) if paths == 2 else max(case.rates_bps)
    rid, allocations, planned = _book(session, need, paths)
    sender = session.net.host("h1")
    sender.cmd("sysctl -qw " + " ".join(CLASSIC_TCP if classic else MODERN_TCP))
    try:
        installed, plan = session.install_packet_split(
            rid, allocations, "h1", "h2", resequence=planned if resequence is None else resequence
        )
        try:
            with running_edges(session, plan.edges) as edges:
                rtt = session.measure_rtt_ms("h1", "h2")
                client = ClientOptions(options.seconds, omit=options.omit)
                got = measure(session, [Flowset("f", "h1", "h2", client)])
                counters = edges["h2"].counters().to_host
        finally:
            session.uninstall(installed)
    finally:
        session.service.cancel(EMULATOR, rid)
        sender.cmd("sysctl -qw " + " ".join(MODERN_TCP))
    goodput = got.results["f"].received_mbps
    summed = sum(a.bandwidth for a in allocations)
    return {
        "paths_mbps": "+".join(f"{r / MBPS:g}" for r in case.rates_bps),
        "one_way_ms": "/".join(f"{d:g}" for d in case.one_way_ms),
        "mdi": round(max(case.one_way_ms) / sum(case.one_way_ms) - 0.5, 3),
        "resequence": plan.edges[1].resequence,
        "threshold": plan.edges[1].reseq.threshold,
        "hold_ms": plan.edges[1].reseq.hold_ms,
        "goodput_mbps": round(goodput, 3),
        "reserved_mbps": summed / MBPS,
        "percent_of_sum": round(100 * goodput * MBPS / sum(case.rates_bps), 1),
        "rtt_configured_ms": "/".join(f"{2 * d:g}" for d in _used_delays(case, allocations)),
        "rtt_measured_ms": None if rtt is None else round(rtt, 2),
        "resequenced": counters.resequenced,
        "released_threshold": counters.released_threshold,
        "released_hold": counters.released_hold,
    }


def _used_delays(case: Case, allocations: Any) -> list[float]:
    """The one-way delays of the paths the reservation got (by their middle node)."""
    middles = [route[1] for route in ROUTES]
    return [case.one_way_ms[middles.index(a.path.nodes[1])] for a in allocations]


def _new_report(options: PacketSplitOptions, scale: Scale) -> Report:
    return Report(
        experiment="packet-split",
        notes=[
            "seed 002 (MPSDN): one TCP flow split packet by packet over two paths by braid's "
            "edge (weighted round robin, VLAN per path), resequenced at the receiving edge "
            "(Algorithm 1 plus a hold time); the best single path through the same edges",
            scale.note(),
            f"{options.seconds:g} s per run after {options.omit} s of warm-up (iperf3 -O), one "
            f"stream; Table II the median of {options.trials} trial(s); "
            f"MTU {options.session.mtu} (hosts 4 bytes less: the tag); "
            f"driver {options.session.driver}; TCP CUBIC; link emulators "
            f"{'real-time' if options.session.realtime else 'at normal priority'}",
            "Table II's latency is taken as each path's one-way delay; link queues are one "
            "round trip long at the link's rate; the RTT configured is per path used; the "
            "measured one is the median of braid's UDP probe over the installed reservation, "
            "whose datagrams the edge's round robin sends on every path in turn",
            "T and the hold time are sized from the declared delays plus a queueing margin "
            "(core/rules/reseq_sizing)",
        ],
        columns=[
            ("part", "part"),
            ("case", "case"),
            ("mode", "forwarding"),
            ("goodput_mbps", "goodput (Mbit/s)"),
            ("percent_of_sum", "% of summed capacity"),
            ("paper_mbps", "paper (Mbit/s)"),
            ("paper_pct", "paper %"),
            ("rtt_configured_ms", "RTT configured (ms)"),
            ("rtt_measured_ms", "RTT measured (ms)"),
            ("threshold", "T"),
            ("resequenced", "resequenced"),
            ("released_threshold", "T releases"),
            ("trials", "Mbit/s per trial"),
        ],
    )


def _judge(report: Report) -> None:
    for row in report.rows:
        if row["part"] == "Table II" and row["mode"] == "braid packet split":
            report.floors.append(
                FloorCheck(f"Table II, {row['case']}", row["percent_of_sum"], FLOOR_PCT)
            )
    singles = {r["case"]: r for r in report.rows if r["mode"] == "best single path"}
    for row in report.rows:
        single = singles.get(row["case"])
        if single is not None and row["mode"] == "braid packet split":
            ratio = 100 * row["goodput_mbps"] / max(single["goodput_mbps"], 1e-9)
            report.findings.append(
                f"{row['case']}: packet split carries {ratio:.0f} % of the best path alone"
            )
    _fig3_findings(report)


def _fig3_findings(report: Report) -> None:
    fig3 = [r for r in report.rows if r["part"] == "Figure 3"]
    for mode in dict.fromkeys(r["mode"] for r in fig3):
        points = ", ".join(
            f"{r['case'][4:]}: {r['percent_of_sum']:.0f} %" for r in fig3 if r["mode"] == mode
        )
        report.findings.append(f"Figure 3, {mode} (MDI: % of the 2-path sum): {points}")
