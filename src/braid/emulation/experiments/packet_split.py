"""`braid emulate packet-split`: one TCP flow split packet by packet over two paths (seed 002).

MPSDN (seed 002) spreads each packet of a flow over several paths by
weighted round robin and puts the flow back in order at the receiving edge.
Here braid books a `split: packet` reservation through its service, compiles
it to label rules plus one edge configuration per host, installs the rules
and runs `braid-dp edge` in front of each host (`host_edges`), on the
two-path network of `split_lab`. One iperf3 stream per run unless a part
says otherwise. Parts (`parts`):

- `table2`: two 10 Mbit/s paths at 95 ms, and 10 + 20 Mbit/s at 60 ms
  (the table's latency taken as each path's one-way delay), against the
  best path alone through the same edges.
- `fig3`: 10 + 10 Mbit/s, the first path at 25 ms, the second longer for
  MDI 0 to 0.3, with and without resequencing; and both again with the
  sender's reordering tolerance of 2017's kernels (no RACK, a reordering
  window fixed at 3 segments), closer to the regime MPSDN measured.
- `fig4`: one path congested mid-run, weights recomputed (`split_congestion`).
- `fig5`: against MPTCP, the second path at 25, 50 and 100 ms (`split_mptcp`).
- `fairness`: Jain's index over ten flows, each second (`split_fairness`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Self

from braid.adapters.emulation.iperf import ClientOptions
from braid.adapters.emulation.scaling import Scale
from braid.emulation.experiments.split_congestion import CongestionTimes, run_congestion
from braid.emulation.experiments.split_fairness import run_fairness
from braid.emulation.experiments.split_mptcp import run_mptcp_comparison
from braid.emulation.host_edges import edge_ready_hosts
from braid.emulation.options import RunOptions
from braid.emulation.report import (
    FloorCheck,
    Progress,
    Report,
    Silent,
    host_load_note,
    median_trial,
)
from braid.emulation.session import EmulationSession, SessionOptions
from braid.emulation.split_lab import (
    EDGE_HOSTS,
    HOSTS,
    Case,
    run_split,
    scaled,
    second_delay,
    set_case,
    two_paths,
)

__all__ = ["PARTS", "PacketSplitOptions", "run_packet_split", "second_delay", "two_paths"]

# seed 002 Table II: path rates (Mbit/s), latency (ms), the paper's throughput (Mbit/s).
TABLE2: Final = {
    "2 x 10 Mbit/s, 95 ms": ((10, 10), 95.0, 18.2),
    "10 + 20 Mbit/s, 60 ms": ((10, 20), 60.0, 26.8),
}
FIG3_BASE_MS: Final = 25.0
FIG3_MBPS: Final = (10, 10)
MDIS: Final = (0.0, 0.1, 0.2, 0.3)
FIG5_DELAYS: Final = (25.0, 50.0, 100.0)  # the second path's; the first at 25 ms
FLOOR_PCT: Final = 95.0
PARTS: Final = ("table2", "fig3", "fig4", "fig5", "fairness")


@dataclass(kw_only=True)
class PacketSplitOptions(RunOptions):
    scale: float = 1.0
    seconds: float = 15.0  # seed 002 Fig. 3: "15-seconds iperf"
    omit: int = 3
    parts: tuple[str, ...] = PARTS
    table: tuple[str, ...] = tuple(TABLE2)
    mdis: tuple[float, ...] = MDIS
    classic_tcp: bool = True  # also run Figure 3 on 2017's TCP
    trials: int = 3  # Table II and Figure 5: the median of these
    baseline: bool = True  # Table II's best single path; Fig. 4's fixed weights; hashing
    long_seconds: float = 30.0  # Figures 4, 5 and fairness: the paper's 30 s transfers
    congest_at: float = 10.0  # Figure 4: when the flood starts
    fig5_delays: tuple[float, ...] = FIG5_DELAYS

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        brief = super().short(session)
        return replace(
            brief,
            seconds=3.0,
            omit=1,
            parts=("table2", "fig3", "fig4"),
            table=(next(iter(TABLE2)),),
            mdis=(0.2,),
            classic_tcp=False,
            baseline=False,
            trials=1,
            long_seconds=12.0,
            congest_at=4.0,
            fig5_delays=(50.0,),
        )

    @classmethod
    def of(cls, session: SessionOptions, short: bool) -> Self:
        # Accurate delays matter here (MDI is a delay ratio): real-time link emulators.
        return super().of(replace(session, realtime=True), short)

    def __post_init__(self) -> None:
        unknown = [p for p in self.parts if p not in PARTS]
        if unknown or not self.parts:
            raise ValueError(f"parts: {', '.join(unknown) or 'none'}: choose from {PARTS}")


def run_packet_split(options: PacketSplitOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    scale = Scale(options.scale)
    report = _new_report(options, scale)
    cases = [(n, Case(scaled(r, scale), (d, d))) for n, (r, d, _) in TABLE2.items()
             if n in options.table and "table2" in options.parts]  # fmt: skip
    fig3 = [(m, Case(scaled(FIG3_MBPS, scale), (FIG3_BASE_MS, second_delay(m, FIG3_BASE_MS))))
            for m in options.mdis if "fig3" in options.parts]  # fmt: skip
    progress.start(_runs(options, len(cases), len(fig3)), "packet-split")
    first = (cases or fig3 or [("", _table_case(1, scale))])[0][1]
    with EmulationSession(
        two_paths(first.rates_bps, first.one_way_ms), HOSTS, options.session
    ) as s:
        edge_ready_hosts(s, EDGE_HOSTS)
        _table2(s, options, cases, report, progress)
        _figure3(s, options, fig3, report, progress)
        _later_parts(s, options, scale, report, progress)
        report.notes.append(s.datapath_note())
    report.notes.append(host_load_note())
    _judge(report)
    return report


def _runs(options: PacketSplitOptions, table: int, fig3: int) -> int:
    runs = (2 if options.baseline else 1) * table + fig3 * (4 if options.classic_tcp else 2)
    runs += ("fig4" in options.parts) * (2 if options.baseline else 1)
    runs += ("fig5" in options.parts) * 4 * len(options.fig5_delays)
    return runs + ("fairness" in options.parts) * (2 if options.baseline else 1)


def _table_case(index: int, scale: Scale) -> Case:
    rates, delay, _ = list(TABLE2.values())[index]
    return Case(scaled(rates, scale), (delay, delay))


def _client(options: PacketSplitOptions, seconds: float | None = None) -> ClientOptions:
    return ClientOptions(seconds or options.seconds, omit=options.omit)


def _table2(
    s: EmulationSession,
    options: PacketSplitOptions,
    cases: list[tuple[str, Case]],
    report: Report,
    progress: Progress,
) -> None:
    modes = ("braid packet split", "best single path")[: 2 if options.baseline else 1]
    for name, case in cases:
        set_case(s, case)
        for mode in modes:
            progress.step(f"Table II, {name}: {mode}")
            paths = 2 if mode.startswith("braid") else 1
            trials = [run_split(s, case, _client(options), paths=paths)
                      for _ in range(options.trials)]  # fmt: skip
            row = median_trial(trials, "goodput_mbps")
            paper = TABLE2[name][2]
            report.rows.append({"part": "Table II", "case": name, "mode": mode,
                                "paper_mbps": paper if mode.startswith("braid") else None,
                                "paper_pct": round(100 * paper / sum(TABLE2[name][0]), 1)
                                if mode.startswith("braid") else None, **row})  # fmt: skip


def _figure3(
    s: EmulationSession,
    options: PacketSplitOptions,
    fig3: list[tuple[float, Case]],
    report: Report,
    progress: Progress,
) -> None:
    for mdi, case in fig3:
        set_case(s, case)
        modes = [("with resequencing", True, False), ("without resequencing", False, False)]
        if options.classic_tcp:
            modes += [
                ("with resequencing, 2017 TCP", True, True),
                ("without resequencing, 2017 TCP", False, True),
            ]
        for mode, reseq, classic in modes:
            progress.step(f"Figure 3, MDI {mdi:g}: {mode}")
            row = run_split(s, case, _client(options), resequence=reseq, classic=classic)
            report.rows.append({"part": "Figure 3", "case": f"MDI {mdi:g}", "mode": mode, **row})


def _later_parts(
    s: EmulationSession,
    options: PacketSplitOptions,
    scale: Scale,
    report: Report,
    progress: Progress,
) -> None:
    long = _client(options, options.long_seconds)
    if "fig4" in options.parts:
        times = CongestionTimes(options.long_seconds, options.congest_at)
        run_congestion(s, _table_case(1, scale), times, report, progress,
                       baseline=options.baseline)  # fmt: skip
    if "fairness" in options.parts:
        run_fairness(s, _table_case(0, scale), long, report, progress, baseline=options.baseline)
    if "fig5" in options.parts:
        cases = [Case(scaled(FIG3_MBPS, scale), (FIG3_BASE_MS, d)) for d in options.fig5_delays]
        run_mptcp_comparison(s, cases, long, options.trials, report, progress)


def _new_report(options: PacketSplitOptions, scale: Scale) -> Report:
    return Report(
        experiment="packet-split",
        notes=[
            "seed 002 (MPSDN): one TCP flow split packet by packet over two paths by braid's "
            "edge (weighted round robin, VLAN per path), resequenced at the receiving edge "
            "(Algorithm 1 plus a hold time); the best single path through the same edges",
            scale.note(),
            f"parts: {', '.join(options.parts)}; {options.seconds:g} s per run (Table II, "
            f"Figure 3) or {options.long_seconds:g} s (Figures 4, 5, fairness) after "
            f"{options.omit} s of warm-up (iperf3 -O; Figure 4 none), one stream (fairness: "
            f"ten); Table II and Figure 5 the median of {options.trials} trial(s); "
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
            ("detail", "detail"),
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
