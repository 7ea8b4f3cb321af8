"""`braid emulate service`: the reservation service programs the emulated switches itself.

Two hosts on a network with two paths; braid's service books, and its
provisioning loop (the one `braid serve --southbound` runs) puts the rules in
a lead time before the start and takes them out on cancel. A 1 kHz UDP probe
runs from the first second to the last, so the run shows, packet by packet:
nothing passes before the reservation's lead time (no unreserved traffic),
traffic passes from then on, TCP gets at least the reserved rate, a
modification that moves the reservation onto both paths (new VLANs, new
groups) is swapped without losing a probe packet, and after the cancel
nothing passes and no braid rule is left on any switch.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from braid.adapters.emulation.iperf import ClientOptions
from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.probe import ProbeRun, ProbeTrace
from braid.adapters.emulation.scaling import Scale
from braid.adapters.southbound.fleet import DriverTables
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.provisioner import Provisioner, Wiring
from braid.app.provisioning.runner import ProvisioningLoop
from braid.app.reservations.commands import Modify
from braid.core.model.instants import format_instant
from braid.emulation.options import RunOptions
from braid.emulation.report import FloorCheck, Progress, Report, Silent, host_load_note
from braid.emulation.session import EMULATOR, EmulationSession
from braid.emulation.traffic import Flowset, measure

MBPS: Final = 1_000_000
PATH_BPS: Final = 100 * MBPS  # each of the two paths, before scaling
PROBE_PORT: Final = 7001
PROBE_RATE: Final = 1000  # packets a second
SETTLE: Final = 2.0  # seconds given to a change before it is judged


@dataclass(kw_only=True)
class ServiceOptions(RunOptions):
    scale: float = 1.0
    lead: int = 1  # seconds before the start that the rules go in


def service_topology(path_bps: int) -> dict[str, Any]:
    """h1 on s1, h2 on s3; an upper path s1-s2-s3 and a lower one s1-s4-s3."""
    wiring = [
        ("s1-s2", "s1", "s2"),
        ("s2-s3", "s2", "s3"),
        ("s1-s4", "s1", "s4"),
        ("s4-s3", "s4", "s3"),
    ]
    return {
        "nodes": [{"id": f"s{i}"} for i in range(1, 5)],
        "links": [
            {"id": i, "a": a, "b": b, "capacity": f"{path_bps}bps", "latency_ms": 1}
            for i, a, b in wiring
        ],
    }


def run_service(options: ServiceOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    scale = Scale(options.scale)
    path_bps = scale.bps(PATH_BPS)
    report = _new_report(options, scale)
    hosts = [HostSpec("h1", "s1"), HostSpec("h2", "s3")]
    progress.start(4, "service")
    with (
        EmulationSession(service_topology(path_bps), hosts, options.session) as session,
        tempfile.TemporaryDirectory(prefix="braid-probe-") as workdir,
    ):
        loop = provisioning_loop(session, options.lead)
        try:
            rows, trace_checks = _timeline(session, options, path_bps, Path(workdir), progress)
        finally:
            loop.stop()
        report.rows += rows
        report.floors += trace_checks
        report.notes.append(session.datapath_note())
        report.notes.append(session.rtt_note())
    report.notes.append(host_load_note())
    return report


def provisioning_loop(session: EmulationSession, lead: int) -> ProvisioningLoop:
    """The provisioning loop of `braid serve`, on the session's service and switches.

    h1 stands for s1 and h2 for s3 (the hosts of `service_topology`).
    """
    ports = session.net.port_map
    driver = session.live_driver
    tables = DriverTables(
        dict.fromkeys(ports.switches, driver), {s: p.dpid for s, p in ports.switches.items()}
    )
    provisioner = Provisioner(
        session.store,
        MemoryProvisioningStore(),
        tables,
        Wiring(ports, {"s1": "h1", "s3": "h2"}),
        lambda: session.service.topology,
        holder="emulate",
        lead=lead,
    )
    loop = ProvisioningLoop(provisioner, session.service.clock, tick=0.2, reconcile_every=5)
    session.service.on_change.append(loop.wake)
    loop.start()
    return loop


@dataclass
class _Moments:
    start: int = 0
    modified: float = 0.0
    cancelled: float = 0.0


def _timeline(
    session: EmulationSession,
    options: ServiceOptions,
    path_bps: int,
    workdir: Path,
    progress: Progress,
) -> tuple[list[dict[str, Any]], list[FloorCheck]]:
    ahead = options.lead + 3  # whole seconds: instants are whole seconds
    probe_seconds = ahead + 2 + options.seconds + options.omit + 3 * SETTLE + 2
    h1, h2 = session.net.host("h1"), session.net.host("h2")
    probe = ProbeRun(
        h1, h2, session.net.ip("h2"), port=PROBE_PORT, rate=PROBE_RATE,
        seconds=probe_seconds, workdir=workdir,
    )  # fmt: skip
    try:
        moments, measured = _steps(session, options, path_bps, progress)
    except BaseException:
        probe.stop()
        raise
    trace = probe.finish()
    return _judge(trace, moments, options, *measured)


def _steps(
    session: EmulationSession, options: ServiceOptions, path_bps: int, progress: Progress
) -> tuple[_Moments, tuple[float, int, int, int]]:
    """Book, measure TCP, modify, cancel; when each happened, and what was measured."""
    ahead = options.lead + 3  # whole seconds: instants are whole seconds
    moments = _Moments()
    progress.step("booking a reservation that starts in a few seconds")
    reserved = int(0.6 * path_bps)
    moments.start = math.ceil(time.time()) + ahead
    window = {"start": format_instant(moments.start), "end": format_instant(moments.start + 600)}
    seen = session.reserve("s1", "s3", reserved, 600, max_paths=2, **window)
    rid = seen.record.id
    _sleep_until(moments.start + 1)
    progress.step("TCP over the reservation")
    client = ClientOptions(options.seconds, omit=options.omit)
    got = measure(session, [Flowset("tcp", "h1", "h2", client)])
    goodput = got.results["tcp"].received_bps
    progress.step("modifying it onto both paths while the probe runs")
    moments.modified = time.time()
    session.service.modify(EMULATOR, rid, Modify(bandwidth=int(1.5 * path_bps)))
    time.sleep(SETTLE)
    paths_after = len(session.allocations(rid))
    progress.step("cancelling it")
    moments.cancelled = time.time()
    session.service.cancel(EMULATOR, rid)
    time.sleep(SETTLE)
    left = sum(len(t.flows) + len(t.groups) for t in session.live_driver.dump().values())
    return moments, (goodput, reserved, paths_after, left)


def _judge(
    trace: ProbeTrace,
    moments: _Moments,
    options: ServiceOptions,
    goodput: float,
    reserved: int,
    paths_after: int,
    left: int,
) -> tuple[list[dict[str, Any]], list[FloorCheck]]:
    opened = moments.start - options.lead
    early = trace.arrived_between(0.0, opened - 0.5)
    first = trace.first_arrival()
    lost = trace.lost_between(moments.modified - 0.2, moments.modified + SETTLE)
    swapped = int(SETTLE * trace.rate) + int(0.2 * trace.rate)
    after = trace.arrived_between(moments.cancelled + 1.0, math.inf)
    row = {
        "lead_s": options.lead,
        "probe_before_lead": early,
        "first_probe_vs_start_s": None if first is None else round(first - moments.start, 3),
        "reserved_mbps": reserved / MBPS,
        "tcp_goodput_mbps": round(goodput / MBPS, 2),
        "paths_after_modify": paths_after,
        "probe_in_swap_window": swapped,
        "probe_lost_in_swap": lost,
        "probe_after_cancel": after,
        "braid_entries_left": left,
    }
    clean = left == 0 and after == 0
    checks = [
        FloorCheck("nothing passes before the lead time", 100.0 * (early == 0), 100.0),
        FloorCheck("TCP goodput / reserved rate", 100.0 * goodput / reserved, 90.0),
        FloorCheck("probe delivered through the swap", 100.0 * (1 - lost / swapped), 100.0),
        FloorCheck("nothing passes or stays after cancel", 100.0 * clean, 100.0),
    ]
    return [row], checks


def _sleep_until(epoch: float) -> None:
    time.sleep(max(0.0, epoch - time.time()))


def _new_report(options: ServiceOptions, scale: Scale) -> Report:
    return Report(
        experiment="service",
        notes=[
            "braid's reservation service with its provisioning loop (as braid serve "
            "--southbound runs it) programs the emulated switches; a 1 kHz UDP probe h1 -> h2 "
            "runs throughout",
            scale.note(),
            f"two paths of {scale.bps(PATH_BPS) / MBPS:g} Mbit/s; rules go in {options.lead} s "
            f"before the start; TCP for {options.seconds:g} s after {options.omit} s of warm-up; "
            f"driver {options.session.driver}",
        ],
        columns=[
            ("probe_before_lead", "probe pkts before the lead time"),
            ("first_probe_vs_start_s", "first probe pkt vs start (s)"),
            ("reserved_mbps", "reserved (Mbit/s)"),
            ("tcp_goodput_mbps", "TCP goodput (Mbit/s)"),
            ("paths_after_modify", "paths after modify"),
            ("probe_in_swap_window", "probe pkts sent around the swap"),
            ("probe_lost_in_swap", "probe pkts lost in the swap"),
            ("probe_after_cancel", "probe pkts after cancel"),
            ("braid_entries_left", "braid entries left"),
        ],
    )
