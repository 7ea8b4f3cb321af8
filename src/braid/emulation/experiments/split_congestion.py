"""Figure 4 of seed 002: one path of a packet-split flow congested mid-run, weights recomputed.

MPSDN (§IV-A4) saturates one path's link with a UDP flood at T1; at T2 its
controller sees the path has no capacity left and puts its round-robin
weight to 0, after which the TCP flow grows back to the other path's
capacity. Here: Table II's second network (10 + 20 Mbit/s at 60 ms); at
`t1` h3 floods P-B (the 10 Mbit/s path's second link) with UDP at three
times its rate; braid's `PathWatch` reads both edges' per-path counters
every 2 s (MPSDN's poll) and drops the congested path's weight. The same
run with the weights left alone is the baseline. Throughput delivered to
h2 is sampled every 0.25 s, the sender's congestion window likewise.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
import time
from typing import Any, Final

from braid.adapters.dataplane.path_watch import PathWatch
from braid.adapters.emulation.iperf import MARK, ClientOptions, IperfServer, close_pipes, run_client
from braid.core.model.booking import Allocation
from braid.emulation.host_edges import running_edges
from braid.emulation.report import Progress, Report
from braid.emulation.session import EMULATOR, EmulationSession, path_of
from braid.emulation.split_lab import MBPS, Case, book, set_case
from braid.emulation.traffic import BackgroundSampler, RateSampler

__all__ = ["CongestionTimes", "run_congestion"]

PART: Final = "Figure 4"
CONGESTED: Final = ("P", "B")  # the link flooded: the first (10 Mbit/s) path's second
FLOOD_FACTOR: Final = 3  # the flood's rate, times the link's
FLOOD_PORT: Final = 5202
STEP: Final = 0.25  # seconds between samples
_CWND: Final = re.compile(r"cwnd:(\d+)")
_ACKED: Final = re.compile(r"bytes_acked:(\d+)")


class CongestionTimes:
    """A run's length and when the flood starts (seconds)."""

    def __init__(self, seconds: float, t1: float) -> None:
        if not 0 < t1 < seconds:
            raise ValueError(f"t1: {t1} must fall inside the {seconds} s run")
        self.seconds, self.t1 = seconds, t1


def run_congestion(
    session: EmulationSession,
    case: Case,
    times: CongestionTimes,
    report: Report,
    progress: Progress,
    *,
    baseline: bool,
) -> None:
    """Rows, series (`report.series["figure4"]`) and findings of Figure 4."""
    set_case(session, case)
    modes = [("weights recomputed", True)] + ([("weights fixed", False)] if baseline else [])
    series: dict[str, Any] = {}
    for mode, watch in modes:
        progress.step(f"{PART}: {mode}")
        series[mode], row = _one(session, case, times, watch)
        report.rows.append({"part": PART, "case": "10 Mbit/s path congested", "mode": mode, **row})
    report.series["figure4"] = series
    for mode, data in series.items():
        moved = data["reweighed_at"]
        when = "never" if moved is None else f"{moved - times.t1:.1f} s after the flood"
        report.findings.append(
            f"Figure 4, {mode}: {data['before']:.1f} Mbit/s before the flood, "
            f"{data['after']:.1f} Mbit/s over the last 5 s (the other path: "
            f"{case.rates_bps[1] / MBPS:g} Mbit/s); weights changed {when}"
        )


def _one(
    session: EmulationSession, case: Case, times: CongestionTimes, watch: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    rid, allocations, planned = book(session, sum(case.rates_bps), 2)
    cross = session.install(
        "cross-traffic",
        (Allocation(path_of(session.topology, CONGESTED), case.rates_bps[0]),),
        "h3",
        "h4",
        booked=False,
    )
    try:
        installed, plan = session.install_packet_split(rid, allocations, "h1", "h2",
                                                       resequence=planned)  # fmt: skip
        try:
            with running_edges(session, plan.edges) as edges:
                watcher = PathWatch(edges, plan.edges, period=2.0) if watch else None
                data = _timeline(session, case, times, watcher)
                data["paths"] = [a.path.nodes[1] for a in allocations]  # weights' order
        finally:
            session.uninstall(installed)
    finally:
        session.uninstall(cross)
        session.service.cancel(EMULATOR, rid)
    return data, {
        "paths_mbps": "+".join(f"{r / MBPS:g}" for r in case.rates_bps),
        "one_way_ms": "/".join(f"{d:g}" for d in case.one_way_ms),
        "goodput_mbps": round(data["goodput"], 3),
        "percent_of_sum": round(100 * data["goodput"] * MBPS / sum(case.rates_bps), 1),
        "detail": _detail(data, times),
    }


def _detail(data: dict[str, Any], times: CongestionTimes) -> str:
    moved = data["reweighed_at"]
    weights = "weights kept" if moved is None else (
        f"weights {data['weights']} at {moved:.1f} s")  # fmt: skip
    return (
        f"flood at {times.t1:g} s; {weights}; Mbit/s before {data['before']:.1f}, "
        f"congested {data['during']:.1f}, last 5 s {data['after']:.1f}"
    )


def _timeline(
    session: EmulationSession, case: Case, times: CongestionTimes, watcher: PathWatch | None
) -> dict[str, Any]:
    h1, h3 = session.net.host("h1"), session.net.host("h3")
    server, flood_server = (
        IperfServer(session.net.host("h2")),
        IperfServer(session.net.host("h4"), FLOOD_PORT),
    )
    client = ClientOptions(times.seconds, omit=0)
    done: dict[str, Any] = {}
    sender = threading.Thread(
        target=lambda: done.update(result=run_client(h1, session.net.ip("h2"), client)),
        daemon=True,
    )
    cwnd = CwndSampler(h1, session.net.ip("h2"))
    flood = None
    try:
        watching = watcher if watcher is not None else contextlib.nullcontext()
        with RateSampler(session, step=STEP) as rates, cwnd, watching:
            t0 = time.time()
            sender.start()
            time.sleep(max(0.0, t0 + times.t1 - time.time()))
            flood = h3.popen(
                ["env", MARK, "iperf3", "-u", "-c", session.net.ip("h4"), "-p", str(FLOOD_PORT),
                 "-b", str(FLOOD_FACTOR * case.rates_bps[0]), "-l", "8000",
                 "-t", f"{times.seconds - times.t1 + 1:g}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            sender.join(timeout=times.seconds + 30)
    finally:
        if flood is not None:
            flood.terminate()
            flood.wait(timeout=5)
            close_pipes(flood)
        server.close()
        flood_server.close()
    return _series(rates, cwnd, watcher, t0, times, done)


def _series(
    rates: RateSampler,
    cwnd: CwndSampler,
    watcher: PathWatch | None,
    t0: float,
    times: CongestionTimes,
    done: dict[str, Any],
) -> dict[str, Any]:
    t = [round(x - t0, 3) for x in rates.times]
    mbps = [round(r / 1e6, 3) for r in rates.rates]
    changes = [] if watcher is None else [c for c in watcher.changes if c.host == "h1"]
    moved = round(changes[0].at - t0, 2) if changes else None

    def mean(lo: float, hi: float) -> float:
        picked = [m for x, m in zip(t, mbps, strict=True) if lo <= x < hi]
        return sum(picked) / len(picked) if picked else 0.0

    end = times.seconds
    return {
        "t": t,
        "mbps": mbps,
        "cwnd_t": [round(x - t0, 3) for x in cwnd.times],
        "cwnd": cwnd.values,
        "t1": times.t1,
        "reweighed_at": moved,
        "weights": list(changes[0].weights) if changes else None,
        "loss": list(changes[0].loss) if changes else None,
        "before": mean(min(2.0, times.t1 / 2), times.t1),
        "during": mean(times.t1, moved if moved is not None else end),
        "after": mean(end - 5, end),
        "goodput": done["result"].received_mbps if "result" in done else 0.0,
        "errors": [] if watcher is None else watcher.errors,
    }


class CwndSampler(BackgroundSampler):
    """The sender's congestion window (segments) towards `dst`, every `step` seconds
    (`ss -ti` in its namespace; the connection that has carried the most data)."""

    def __init__(self, host: Any, dst: str, step: float = STEP) -> None:
        super().__init__(step)
        self.host, self.dst = host, dst
        self.values: list[int] = []

    def _run(self) -> None:
        while not self._stop.wait(self.step):
            proc = self.host.popen(["ss", "-tinH", "dst", self.dst], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)  # fmt: skip
            out, _ = proc.communicate(timeout=5)
            close_pipes(proc)
            found = busiest_cwnd(out or "")
            if found is not None:
                self.times.append(time.time())
                self.values.append(found)


def busiest_cwnd(ss_output: str) -> int | None:
    """The congestion window of the connection with the most bytes acknowledged."""
    best: tuple[int, int] | None = None
    for line in ss_output.splitlines():
        window, acked = _CWND.search(line), _ACKED.search(line)
        if window is None:
            continue
        candidate = (int(acked.group(1)) if acked else 0, int(window.group(1)))
        best = candidate if best is None or candidate > best else best
    return None if best is None else best[1]
