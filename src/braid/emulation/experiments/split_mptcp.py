"""Figure 5 of seed 002: braid's per-packet split against MPTCP on the same two paths.

MPSDN (§IV-A5): two hosts, two 10 Mbit/s paths, the first at 25 ms, the
second at 25, 50 and 100 ms (MDI 0, 0.17, 0.3); MPTCP with two subflows and
the default scheduler on multi-addressed hosts, MPSDN with one address per
host; a 30 s transfer, goodput at the receiver; each path alone as well.

Here MPTCP is the kernel's (`net.mptcp.enabled`): h1 gets a second address,
an MPTCP endpoint of kind `subflow` on it (the in-kernel path manager opens
the second subflow from it), and braid installs two flow-level single-path
reservations, one per address, so each subflow has its own path; iperf3
runs under `mptcpize` (Debian's mptcpd). The hosts' edges pass everything
unchanged in these runs.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, Final

from braid.adapters.emulation.iperf import ClientOptions
from braid.core.model.booking import Allocation
from braid.core.rules.model import HostPort, PortMap
from braid.emulation.host_edges import passing_edges
from braid.emulation.report import FloorCheck, Progress, Report, median_trial
from braid.emulation.session import EmulationSession, path_of
from braid.emulation.split_lab import (
    EDGE_HOSTS,
    MBPS,
    ROUTES,
    Case,
    path_counters,
    path_rates,
    run_split,
    set_case,
)
from braid.emulation.traffic import Flowset, measure

__all__ = ["MPTCP_MODES", "mptcp_missing", "run_mptcp_comparison"]

PART: Final = "Figure 5"
SECOND_ADDRESS: Final = "10.0.1.1"  # h1's second address: the second subflow's
ALIAS: Final = "h1-subflow2"
MPTCPIZE: Final = ("mptcpize", "run")
MPTCP_MODES: Final = ("braid packet split", "MPTCP", "path 1 alone", "path 2 alone")
RATIO_FLOOR: Final = 90.0  # braid >= 0.9 x MPTCP at MDI <= 0.17
FLOOR_MDI: Final = 0.17


def mptcp_missing() -> str | None:
    """Why MPTCP cannot be measured here (None: it can)."""
    try:
        with open("/proc/sys/net/mptcp/enabled") as handle:
            if handle.read().strip() != "1":
                return "net.mptcp.enabled is 0 (sysctl -w net.mptcp.enabled=1)"
    except OSError:
        return "the kernel has no MPTCP (no /proc/sys/net/mptcp)"
    if shutil.which("mptcpize") is None:
        return "mptcpize is missing (apt-get install mptcpd)"
    return None


def run_mptcp_comparison(
    session: EmulationSession,
    cases: Sequence[Case],
    client: ClientOptions,
    trials: int,
    report: Report,
    progress: Progress,
) -> None:
    missing = mptcp_missing()
    if missing:
        report.findings.append(f"Figure 5: MPTCP not measured: {missing}")
    modes = [m for m in MPTCP_MODES if not (missing and m == "MPTCP")]
    for case in cases:
        set_case(session, case)
        label = f"second path {case.one_way_ms[1]:g} ms (MDI {case.mdi:.2f})"
        rows: dict[str, dict[str, Any]] = {}
        for mode in modes:
            progress.step(f"{PART}, {label}: {mode}")
            runs = [_run(session, case, client, mode) for _ in range(trials)]
            rows[mode] = {"part": PART, "case": label, "mode": mode,
                          **median_trial(runs, "goodput_mbps")}  # fmt: skip
            report.rows.append(rows[mode])
        _judge(report, case, label, rows)


def _run(session: EmulationSession, case: Case, client: ClientOptions, mode: str) -> dict[str, Any]:
    if mode == "MPTCP":
        return _mptcp(session, case, client)
    route = {"path 1 alone": 0, "path 2 alone": 1}.get(mode)
    row = run_split(session, case, client, route=route)
    row["detail"] = f"per path {row['per_path_mbps']} Mbit/s"
    return row


def _judge(report: Report, case: Case, label: str, rows: dict[str, dict[str, Any]]) -> None:
    braid, mptcp = rows.get("braid packet split"), rows.get("MPTCP")
    if braid is None or mptcp is None:
        return
    ratio = 100 * braid["goodput_mbps"] / max(mptcp["goodput_mbps"], 1e-9)
    braid["braid_vs_mptcp"] = round(ratio / 100, 3)
    report.findings.append(
        f"Figure 5, {label}: braid {braid['goodput_mbps']:.1f}, MPTCP "
        f"{mptcp['goodput_mbps']:.1f} Mbit/s: braid / MPTCP = {ratio / 100:.2f}"
    )
    if case.mdi <= FLOOR_MDI + 1e-9:
        report.floors.append(FloorCheck(f"Figure 5, {label}: braid / MPTCP", ratio, RATIO_FLOOR))


def _mptcp(session: EmulationSession, case: Case, client: ClientOptions) -> dict[str, Any]:
    """Two subflows, one per path: h1's first address on path 1, its second on path 2."""
    with passing_edges(session, EDGE_HOSTS), _multi_addressed(session):
        ports = _with_alias(session.net.port_map)
        installed = [
            session.install(f"mptcp-{i + 1}",
                            (Allocation(path_of(session.topology, ROUTES[i]), rate),),
                            src, "h2", booked=False, ports=ports)
            for i, (src, rate) in enumerate(zip(("h1", ALIAS), case.rates_bps, strict=True))
        ]  # fmt: skip
        try:
            rtt = session.measure_rtt_ms("h1", "h2")
            flow = Flowset("f", "h1", "h2", replace(client, launcher=MPTCPIZE))
            got = measure(session, [flow], path_counters())
        finally:
            for one in installed:
                session.uninstall(one)
    goodput = got.results["f"].received_mbps
    per_path = path_rates(got.path_mbps)
    return {
        "paths_mbps": "+".join(f"{r / MBPS:g}" for r in case.rates_bps),
        "one_way_ms": "/".join(f"{d:g}" for d in case.one_way_ms),
        "mdi": case.mdi,
        "goodput_mbps": round(goodput, 3),
        "percent_of_sum": round(100 * goodput * MBPS / sum(case.rates_bps), 1),
        "rtt_configured_ms": "/".join(f"{2 * d:g}" for d in case.one_way_ms),
        "rtt_measured_ms": None if rtt is None else round(rtt, 2),
        "per_path_mbps": per_path,
        "detail": f"per path {per_path} Mbit/s (one subflow each)",
    }


def _with_alias(ports: PortMap) -> PortMap:
    """The wiring plus h1's second address, as a host of its own at the same port."""
    h1 = ports.hosts["h1"]
    alias = HostPort(ALIAS, h1.switch, h1.port, SECOND_ADDRESS, h1.mac)
    return PortMap(ports.switches, {**ports.hosts, ALIAS: alias})


@contextlib.contextmanager
def _multi_addressed(session: EmulationSession) -> Iterator[None]:
    """h1's second address with an MPTCP `subflow` endpoint; both hosts allow 2 subflows."""
    h1, h2 = session.net.host("h1"), session.net.host("h2")
    app1, app2 = f"{h1.name}-app", f"{h2.name}-app"
    mac = session.net.wiring.hosts["h1"].mac
    for host in (h1, h2):
        host.cmd("ip mptcp endpoint flush; ip mptcp limits set subflow 2 add_addr_accepted 2")
    h1.cmd(f"ip addr add {SECOND_ADDRESS}/8 dev {app1}")
    h1.cmd(f"ip mptcp endpoint add {SECOND_ADDRESS} dev {app1} subflow")
    h2.cmd(f"ip neigh replace {SECOND_ADDRESS} lladdr {mac} dev {app2} nud permanent")
    try:
        yield
    finally:
        h1.cmd(f"ip mptcp endpoint flush; ip addr del {SECOND_ADDRESS}/8 dev {app1}")
        h2.cmd(f"ip neigh del {SECOND_ADDRESS} dev {app2}")
