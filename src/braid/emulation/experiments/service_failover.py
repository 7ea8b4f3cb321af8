"""`braid emulate service-failover`: a protected reservation survives a cut link.

The network of `braid emulate service` (two paths s1 -> s3); the service
books a protected reservation h1 -> h2 (a primary and a link-disjoint
standby, both compiled into fast-failover groups) and its provisioning loop
installs it. A 1 kHz UDP probe runs h1 -> h2. Then the primary's far link
(not the first hop from s1, so s1's own fast-failover group cannot see it) is
cut; a moment later a monitor tells the service, as `POST
/v1/links/{id}/state {"state": "down"}` does; the service moves the
reservation to its standby and the provisioning loop reorders the groups'
buckets. The run measures how long after that post the probe's packets
arrive again (over the standby: the primary is cut), and what the standby
link carried meanwhile. Then the link comes back, the post says `up`, and the
reservation goes back to its primary: the probe shows what that cost.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.probe import ProbeRun, ProbeTrace
from braid.adapters.emulation.scaling import Scale
from braid.app.records import User
from braid.app.reservations.link_state import set_link_state
from braid.app.reservations.plan_facts import protection_of
from braid.core.model.instants import format_instant
from braid.emulation.experiments.service import PATH_BPS, provisioning_loop, service_topology
from braid.emulation.failover.measure import outage_ms
from braid.emulation.options import RunOptions
from braid.emulation.report import FloorCheck, Progress, Report, Silent, host_load_note
from braid.emulation.session import EmulationSession

MBPS: Final = 1_000_000
PROBE_PORT: Final = 7002
PROBE_RATE: Final = 1000  # packets a second
DETECT: Final = 0.3  # seconds from the cut to the monitor's post (a 10 Hz monitor's k=3)
SETTLE: Final = 2.5  # seconds given to each change before the next step
MONITOR: Final = User("monitor", "monitor")
RECOVERY_CEILING_S: Final = 1.0  # the floor: on the standby within 1 s of the post


@dataclass(kw_only=True)
class ServiceFailoverOptions(RunOptions):
    lead: int = 1  # seconds before the start that the rules go in


@dataclass
class _Moments:
    start: int = 0
    cut: float = 0.0
    posted_down: float = 0.0
    answered_down: float = 0.0
    posted_up: float = 0.0


def run_service_failover(
    options: ServiceFailoverOptions, progress: Progress | None = None
) -> Report:
    progress = progress or Silent()
    path_bps = Scale(options.scale).bps(PATH_BPS)
    report = _new_report(options, path_bps)
    hosts = [HostSpec("h1", "s1"), HostSpec("h2", "s3")]
    progress.start(4, "service-failover")
    with (
        EmulationSession(service_topology(path_bps), hosts, options.session) as session,
        tempfile.TemporaryDirectory(prefix="braid-probe-") as workdir,
    ):
        loop = provisioning_loop(session, options.lead)
        try:
            row, checks = _run(session, options, path_bps, Path(workdir), progress)
        finally:
            loop.stop()
        report.rows.append(row)
        report.floors += checks
        report.notes.append(session.datapath_note())
    report.notes.append(host_load_note())
    return report


def _run(
    session: EmulationSession,
    options: ServiceFailoverOptions,
    path_bps: int,
    workdir: Path,
    progress: Progress,
) -> tuple[dict[str, Any], list[FloorCheck]]:
    ahead = options.lead + 2
    h1, h2 = session.net.host("h1"), session.net.host("h2")
    seconds = ahead + 2 + DETECT + 2 * SETTLE + 2
    probe = ProbeRun(h1, h2, session.net.ip("h2"), port=PROBE_PORT, rate=PROBE_RATE,
                     seconds=seconds, workdir=workdir)  # fmt: skip
    try:
        moments, facts = _steps(session, options, path_bps, progress)
    except BaseException:
        probe.stop()
        raise
    return _judge(probe.finish(), moments, facts)


def _steps(
    session: EmulationSession,
    options: ServiceFailoverOptions,
    path_bps: int,
    progress: Progress,
) -> tuple[_Moments, dict[str, Any]]:
    moments = _Moments()
    progress.step("booking a protected reservation h1 -> h2")
    moments.start = math.ceil(time.time()) + options.lead + 2
    window = {"start": format_instant(moments.start), "end": format_instant(moments.start + 600)}
    seen = session.reserve("s1", "s3", int(0.3 * path_bps), 600, protect=True, **window)
    paths = protection_of(seen.record.plan)
    assert paths is not None, "a protected booking stores its two paths"
    cut_link, standby_link = paths.primary.links[-1], paths.standby.links[-1]
    time.sleep(max(0.0, moments.start + 1.5 - time.time()))
    progress.step(f"cutting {cut_link}, then posting it down")
    port = _far_port(session, cut_link, paths.primary.nodes[-2])
    standby_before = session.net.tx_bytes(standby_link, paths.standby.nodes[-2])
    moments.cut = time.time()
    session.net.run(["ip", "link", "set", port, "down"])
    time.sleep(DETECT)
    moments.posted_down = time.time()
    books, failback = session.service.books, session.service.failback
    done = set_link_state(books, MONITOR, cut_link, {"state": "down"}, failback=failback)
    moments.answered_down = time.time()
    time.sleep(SETTLE)
    standby_bytes = session.net.tx_bytes(standby_link, paths.standby.nodes[-2]) - standby_before
    moved = session.store.get(seen.record.id)
    on_standby = moved is not None and [a.path for a in moved.allocations] == [paths.standby]
    progress.step(f"restoring {cut_link}, then posting it up")
    session.net.run(["ip", "link", "set", port, "up"])
    time.sleep(0.2)  # the port's carrier comes back before the monitor would say so
    moments.posted_up = time.time()
    back = set_link_state(books, MONITOR, cut_link, {"state": "up"}, failback=failback)
    time.sleep(SETTLE)
    progress.step("judging the probe stream")
    facts = {
        "primary": "-".join(paths.primary.nodes),
        "standby": "-".join(paths.standby.nodes),
        "cut_link": cut_link,
        "moves_down": [m.action for m in done.moves],
        "moves_up": [m.action for m in back.moves],
        "on_standby_after_down": on_standby,
        "standby_link_bytes_while_down": standby_bytes,
    }
    return moments, facts


def _far_port(session: EmulationSession, link: str, node: str) -> str:
    """The interface of `link` at `node` (the end nearer the source)."""
    a_intf, b_intf = session.net.wiring.link_intfs[link]
    return a_intf if session.topology.links[link].a == node else b_intf


def _judge(
    trace: ProbeTrace, moments: _Moments, facts: dict[str, Any]
) -> tuple[dict[str, Any], list[FloorCheck]]:
    back = next(
        (at for _, _, at in sorted(trace.arrivals, key=lambda a: a[2]) if at > moments.cut), None
    )
    recovered = math.inf if back is None else back - moments.posted_down
    row = {
        **facts,
        "answer_ms": round(1000 * (moments.answered_down - moments.posted_down), 1),
        "probe_back_after_post_s": round(recovered, 3),
        "probe_lost_cut_to_post": trace.lost_between(moments.cut, moments.posted_down),
        "outage_ms": round(outage_ms(trace, moments.cut - 0.1, moments.posted_up - 0.1), 1),
        "probe_lost_in_failback": trace.lost_between(moments.posted_up, moments.posted_up + SETTLE),
    }
    checks = [
        FloorCheck(
            "probe on the standby after POST …/state down",
            recovered,
            RECOVERY_CEILING_S,
            unit=" s",
            at_most=True,
        ),
        FloorCheck("reservation moved to its standby", 100.0 * facts["on_standby_after_down"], 100),
    ]
    return row, checks


def _new_report(options: ServiceFailoverOptions, path_bps: int) -> Report:
    return Report(
        experiment="service-failover",
        notes=[
            "braid's reservation service with its provisioning loop (as braid serve "
            "--southbound runs it); a protected reservation h1 -> h2 with a 1 kHz UDP probe",
            f"two paths of {path_bps / MBPS:g} Mbit/s; the primary's far link is cut, and "
            f"{DETECT:g} s later the link-state post (as a monitor's) tells the service; "
            f"driver {options.session.driver}",
        ],
        columns=[
            ("primary", "primary"),
            ("standby", "standby"),
            ("cut_link", "cut link"),
            ("answer_ms", "post answered (ms)"),
            ("probe_back_after_post_s", "probe back after post (s)"),
            ("probe_lost_cut_to_post", "probe pkts lost cut -> post"),
            ("outage_ms", "longest outage (ms)"),
            ("standby_link_bytes_while_down", "standby link bytes while down"),
            ("probe_lost_in_failback", "probe pkts lost in failback"),
        ],
    )
