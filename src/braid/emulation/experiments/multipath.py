"""`braid emulate multipath`: N TCP flows over disjoint paths vs the best single path (seed 002).

Seed 002's Table II aggregated two or more wide-area paths between two hosts
(10 + 10 Mbit/s gave 18.2 Mbit/s, 10 + 20 gave 26.8) by splitting traffic in
the network. Stock Open vSwitch splits per flow, so here N TCP flows between
the two hosts are spread by the reservation's weighted select group (the
switch's own hash; flows are not pinned), against the same N flows on the
best single path booked alone. Paths are S-Pi-D, each link at its capacity,
each path with Table II's latency as its one-way delay (95 ms for the
10 Mbit/s paths of *2 equal*, 60 ms for *2 unequal*'s; *3 paths* takes the
two 95 ms paths and the 20 Mbit/s one at 60 ms), half on each of its two
links through braid's link emulator, each link's queue one round trip long.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final, Self

from braid.adapters.emulation.iperf import ClientOptions
from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.scaling import Scale
from braid.core.errors import InputError
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
from braid.emulation.traffic import Flowset, measure

MBPS: Final = 1_000_000
CASES: Final = {  # seed 002 Table II, Mbit/s per path
    "2 equal": (10, 10),
    "2 unequal": (10, 20),
    "3 paths": (10, 10, 20),
}
ONE_WAY_MS: Final = {  # seed 002 Table II's latencies, per path
    "2 equal": (95.0, 95.0),
    "2 unequal": (60.0, 60.0),
    "3 paths": (95.0, 95.0, 60.0),
}
RELAYS: Final = ("P1", "P2", "P3")
UNUSED_MBPS: Final = 1  # a path a case does not use: too thin to be chosen
FLOWS: Final = (1, 2, 4, 8, 16)
FLOOR_PCT: Final = 95.0
FLOOR_FLOWS: Final = 8


@dataclass(kw_only=True)
class MultipathOptions(RunOptions):
    scale: float = 2.0
    trials: int = 3  # each configuration's reported run is the median of these
    flows: tuple[int, ...] = FLOWS
    cases: tuple[str, ...] = tuple(CASES)

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        return replace(super().short(session), trials=1, flows=(8,), cases=("2 equal",))


def parse_flows(text: str) -> tuple[int, ...]:
    """`8,16,32` -> (8, 16, 32); each a positive count."""
    try:
        counts = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise InputError("flows", f"comma-separated whole numbers, got {text!r}") from None
    if not counts or any(not 0 < n <= 128 for n in counts):
        raise InputError("flows", f"each flow count in 1..128, got {text!r}")
    return counts


def parse_cases(text: str) -> tuple[str, ...]:
    """`2 equal,3 paths` -> the named cases of CASES, in the order given."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [n for n in names if n not in CASES]
    if not names or unknown:
        raise InputError("cases", f"choose from {', '.join(CASES)}; got {text!r}")
    return names


def multipath_topology(
    capacities_bps: tuple[int, ...], one_way_ms: tuple[float, ...] | None = None
) -> dict[str, Any]:
    """S-Pi-D per relay; each path's one-way delay (default none) half on each link."""
    delays = one_way_ms or (0.0,) * len(RELAYS)
    links = []
    for relay, capacity, delay in zip(RELAYS, capacities_bps, delays, strict=True):
        for a, b in (("S", relay), (relay, "D")):
            links.append({"id": f"{a}-{b}", "a": a, "b": b, "capacity": f"{capacity}bps",
                          "latency_ms": delay / 2})  # fmt: skip
    return {"nodes": [{"id": n} for n in ("S", *RELAYS, "D")], "links": links}


def _capacities(case: str, scale: Scale) -> tuple[int, ...]:
    used = [scale.bps(m * MBPS) for m in CASES[case]]
    return tuple(used + [scale.bps(UNUSED_MBPS * MBPS)] * (len(RELAYS) - len(used)))


def _delays(case: str) -> tuple[float, ...]:
    """Each relay's path delay; a path the case does not use as its slowest one."""
    used = ONE_WAY_MS[case]
    return used + (max(used),) * (len(RELAYS) - len(used))


def _set_case(session: EmulationSession, case: str, scale: Scale) -> None:
    """The case's rates and delays, every link's queue one round trip long (as a long-haul
    router's buffer; at least the default 0.1 s)."""
    session.retopologise(multipath_topology(_capacities(case, scale), _delays(case)))
    queue = max(0.1, 2 * max(ONE_WAY_MS[case]) / 1000)
    for link in session.topology.links.values():
        session.net.set_link_rate(link.id, link.capacity, queue_seconds=queue)


def run_multipath(options: MultipathOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    scale = Scale(options.scale)
    report = _new_report(options, scale)
    hosts = [HostSpec("h1", "S"), HostSpec("h2", "D")]
    first = options.cases[0]
    topology = multipath_topology(_capacities(first, scale), _delays(first))
    progress.start(2 * len(options.cases) * len(options.flows), "multipath")
    with EmulationSession(topology, hosts, options.session) as session:
        for case in options.cases:
            capacities = _capacities(case, scale)
            _set_case(session, case, scale)
            paths = len(CASES[case])
            summed = sum(capacities[:paths])
            for n in options.flows:
                for mode, rate, max_paths in (
                    ("multipath", summed, paths),
                    ("best single path", max(capacities), 1),
                ):
                    progress.step(f"{case}: {n} flow(s), {mode}")
                    row = median_trial(
                        [
                            _run_one(session, options, n, rate, max_paths, paths)
                            for _ in range(options.trials)
                        ],
                        "goodput_mbps",
                    )
                    report.rows.append(
                        {
                            "case": case,
                            "mode": mode,
                            "flows": n,
                            "paths_mbps": "+".join(f"{c / MBPS:g}" for c in capacities[:paths]),
                            "rtt_configured_ms": "/".join(
                                f"{2 * d:g}" for d in sorted(set(ONE_WAY_MS[case]))
                            ),
                            "reserved_mbps": rate / MBPS,
                            "summed_mbps": summed / MBPS,
                            "percent_of_sum": round(100 * row["goodput_mbps"] * MBPS / summed, 2),
                            **row,
                        }
                    )
        report.notes.append(session.datapath_note())
        report.notes.append(session.rtt_note())
    report.notes.append(host_load_note())
    _judge(report)
    return report


def _run_one(
    session: EmulationSession,
    options: MultipathOptions,
    flows: int,
    rate: int,
    max_paths: int,
    paths: int,
) -> dict[str, Any]:
    """Book, install, run `flows` TCP flows, cancel; goodput and per-path rates."""
    counters = {relay: (f"S-{relay}", "S") for relay in RELAYS}
    installed = session.reserve_and_install(
        "h1", "h2", rate, int(options.seconds) + 60, max_paths=max_paths
    )
    try:
        client = ClientOptions(options.seconds, streams=flows, omit=options.omit)
        got = measure(session, [Flowset("f", "h1", "h2", client)], counters)
    finally:
        session.cancel(installed)
    per_path = {k: _mean(v) for k, v in got.path_mbps.items()}
    return {
        "goodput_mbps": round(got.results["f"].received_mbps, 3),
        "per_path_mbps": "/".join(f"{per_path[r]:.1f}" for r in RELAYS[:paths]),
        "idle_paths": sum(1 for r in RELAYS[:paths] if per_path[r] < 0.1),
    }


def _mean(values: list[float]) -> float:
    # The first and last samples straddle the start and the end of the run.
    inner = values[1:-1] or values
    return sum(inner) / len(inner) if inner else 0.0


def _new_report(options: MultipathOptions, scale: Scale) -> Report:
    return Report(
        experiment="multipath",
        notes=[
            "seed 002 Table II with many flows: N TCP flows between two hosts over 2 or 3 "
            "disjoint paths (weighted select group, per-flow hash) vs the best single path",
            scale.note(),
            f"{options.seconds:g} s per run after {options.omit} s of warm-up (iperf3 -O), "
            f"median of {options.trials} trial(s); "
            f"MTU {options.session.mtu}; driver {options.session.driver}; TCP CUBIC",
            "per-path rates are the source switch's transmit counters on each path's first "
            "link (link-layer bits, data direction)",
            "each path's one-way delay is Table II's latency (braid-dp link, half on each of "
            "its links; --latency overrides it per link); link queues one round trip long",
        ],
        columns=[
            ("case", "case"),
            ("mode", "forwarding"),
            ("flows", "flows"),
            ("paths_mbps", "paths (Mbit/s)"),
            ("rtt_configured_ms", "RTT configured (ms)"),
            ("goodput_mbps", "goodput (Mbit/s)"),
            ("percent_of_sum", "% of summed capacity"),
            ("per_path_mbps", "per path (Mbit/s)"),
            ("trials", "Mbit/s per trial"),
        ],
    )


def _judge(report: Report) -> None:
    rows = {(r["case"], r["mode"], r["flows"]): r for r in report.rows}
    for (case, mode, flows), row in rows.items():
        if mode != "multipath" or flows < FLOOR_FLOWS:
            continue
        if case == "2 equal":
            report.floors.append(
                FloorCheck(f"{case}, {flows} flows", row["percent_of_sum"], FLOOR_PCT)
            )
        single = rows.get((case, "best single path", flows))
        if single is not None:
            ratio = 100 * row["goodput_mbps"] / single["goodput_mbps"]
            report.floors.append(
                FloorCheck(f"{case}, {flows} flows: multipath vs best single path", ratio, 100.0)
            )
    for (case, mode, flows), row in rows.items():
        if mode == "multipath" and row["idle_paths"]:
            report.findings.append(
                f"{case}, {flows} flow(s): the switch's hash left {row['idle_paths']} path(s) "
                f"without a flow (per path {row['per_path_mbps']} Mbit/s): "
                f"{row['percent_of_sum']:.1f} % of the summed capacity"
            )
