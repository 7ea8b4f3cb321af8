"""`braid emulate guarantees`: what braid's bookings deliver on the wire under a flood.

Two edge switches, E1 and E2, joined by one 100 Mbit/s core link with 25 ms
each way (braid-dp): a 50 ms round trip on every reserved path. Three
reservations E1 -> E2 share the link, booked through braid's reservation
service: 30 Mbit/s `hard` with a UDP sender at twice that, 20 Mbit/s `soft`
with a UDP sender at twice that, 40 Mbit/s `hard` with one greedy TCP flow.
Beside them, best effort between other hosts over the same link: a UDP
flood at line rate and a greedy TCP flow. Every flow's rate is read each
second at its receiver. A second phase leaves the reservations idle: best
effort should then take the whole link, not be starved by guarantees no one
uses.

The same run without enforcement (the rules only route, as before braid
compiled meters and queues) is the baseline, so the report compares
enforcement with today's behaviour from one invocation.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from typing import Any, Final, Self

from braid.adapters.emulation.iperf_received import (
    JsonServer,
    ReceivedFlow,
    ReceivedRates,
    run_received,
)
from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.scaling import Scale
from braid.core.errors import InputError
from braid.core.model.booking import Allocation
from braid.core.rules.enforcement import Policing, parse_policing
from braid.emulation.guarantee_floors import judge, link_goodput
from braid.emulation.options import RunOptions
from braid.emulation.report import Progress, Report, Silent, host_load_note
from braid.emulation.session import EmulationSession, Installed, SessionOptions, path_of

__all__ = [
    "BEST_EFFORT",
    "RESERVATIONS",
    "GuaranteeOptions",
    "Role",
    "guarantees_topology",
    "parse_policing_choice",
    "run_guarantees",
]

MBPS: Final = 1_000_000
LINK_MBPS: Final = 100
ONE_WAY_MS: Final = 25.0  # one core link: a 50 ms round trip on every reserved path
CORE: Final = ("E1", "E2")
BOOKED: Final = "booked"  # each reservation policed as the scenario books it
CHOICES: Final = (BOOKED, "none", "soft", "hard")
OFF: Final = "enforcement off"
ON: Final = "enforced"


@dataclass(frozen=True, slots=True)
class Role:
    """One flow of the scenario; `booked_mbps` None for best effort."""

    name: str
    sender: str
    receiver: str
    port: int
    udp: bool
    send_factor: float | None  # UDP rate, times the booking (or the link for best effort)
    booked_mbps: float | None = None
    policing: Policing | None = None


RESERVATIONS: Final = (
    Role("hard over-sender", "h1", "h2", 5301, True, 2.0, 30, Policing.HARD),
    Role("soft over-sender", "h3", "h4", 5302, True, 2.0, 20, Policing.SOFT),
    Role("TCP in reservation", "h5", "h6", 5303, False, None, 40, Policing.HARD),
)
BEST_EFFORT: Final = (
    Role("best-effort flood", "h7", "h8", 5304, True, 1.0),
    Role("best-effort TCP", "h9", "h10", 5305, False, None),
)


@dataclass(kw_only=True)
class GuaranteeOptions(RunOptions):
    seconds: float = 20.0
    idle_seconds: float = 10.0
    policing: str = BOOKED  # the enforced run's policing: as booked, or one for all
    baseline: bool = True  # also the run with enforcement off

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        return replace(super().short(session), seconds=4.0, idle_seconds=3.0)


def parse_policing_choice(value: str) -> str:
    if value not in CHOICES:
        raise InputError("policing", f"must be one of {', '.join(CHOICES)}, got {value!r}")
    return value


def guarantees_topology(link_bps: int) -> dict[str, Any]:
    return {
        "nodes": [{"id": node} for node in CORE],
        "links": [
            {
                "id": "E1-E2",
                "a": CORE[0],
                "b": CORE[1],
                "capacity": f"{link_bps}bps",
                "latency_ms": ONE_WAY_MS,
            }
        ],
    }


def _hosts() -> list[HostSpec]:
    return [
        HostSpec(name, node)
        for role in (*RESERVATIONS, *BEST_EFFORT)
        for name, node in ((role.sender, CORE[0]), (role.receiver, CORE[1]))
    ]


def _modes(options: GuaranteeOptions) -> list[tuple[str, str]]:
    """(mode, policing choice) in run order: the baseline first, so whatever enforcement
    leaves on a port once removed cannot touch it."""
    modes = [(OFF, "none")] if options.baseline or options.policing == "none" else []
    if options.policing != "none":
        modes.append((ON, options.policing))
    return modes


def _policing(role: Role, choice: str) -> Policing | None:
    if choice == "none":
        return None
    return role.policing if choice == BOOKED else parse_policing(choice)


def run_guarantees(options: GuaranteeOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    scale = Scale(options.scale)
    link_bps = scale.bps(LINK_MBPS * MBPS)
    modes = _modes(options)
    report = _new_report(options, scale, link_bps)
    progress.start(2 * len(modes), "guarantees")
    with EmulationSession(guarantees_topology(link_bps), _hosts(), options.session) as session:
        for mode, choice in modes:
            installed = _book(session, scale, choice)
            try:
                progress.step(f"{mode}: reservations and best effort together")
                loaded = _measure(session, options, scale, options.seconds, with_reserved=True)
                if choice != "none":
                    report.notes.append(_enforcement_note(session))
                progress.step(f"{mode}: reservations idle, best effort alone")
                idle = _measure(session, options, scale, options.idle_seconds, with_reserved=False)
            finally:
                for one in installed:
                    session.cancel(one)
            _record(report, mode, choice, loaded, idle, scale, link_bps, options)
        report.notes.append(session.datapath_note())
        report.notes.append(session.rtt_note())
    report.notes.append(host_load_note())
    judge(report, link_bps, options.session.mtu)
    return report


def _book(session: EmulationSession, scale: Scale, choice: str) -> list[Installed]:
    """The three reservations through the service, then best effort's routes (unbooked)."""
    installed = []
    for role in RESERVATIONS:
        policing = _policing(role, choice)
        rate = scale.bps(int((role.booked_mbps or 0) * MBPS))
        seen = session.reserve(
            *CORE, rate, 3600, policing=(policing or Policing.SOFT).value, max_paths=1
        )
        rid = seen.record.id
        installed.append(
            session.install(
                rid, session.allocations(rid), role.sender, role.receiver, policing=policing
            )
        )
    core = path_of(session.topology, CORE)
    for role in BEST_EFFORT:
        link = session.topology.links["E1-E2"].capacity
        installed.append(
            session.install(
                f"{role.name}-routes", (Allocation(core, link),), role.sender, role.receiver,
                booked=False,
            )
        )  # fmt: skip
    return installed


_LEAF: Final = re.compile(
    r"qdisc (\w+) \S+ parent (\S+) limit (\S+).*?\n\s*Sent (\d+) bytes (\d+) pkt \(dropped (\d+)"
)
_METER: Final = re.compile(r"meter:(\d+) .*?packet_in_count:(\d+).*?\n\s*0: packet_count:(\d+)")


def _enforcement_note(session: EmulationSession) -> str:
    """Where enforcement dropped frames at E1 while everything ran (tc leaf queues on
    its end of the core link, then its meters): read beside the figures, it says which
    losses the queues and meters account for."""
    intf = session.net.wiring.link_intfs["E1-E2"][0]
    shown = session.net.run(["tc", "-s", "qdisc", "show", "dev", intf]).stdout
    leaves = [
        f"{cls} {kind} {limit}: dropped {dropped} of {int(sent) + int(dropped)} pkts"
        for kind, cls, limit, _, sent, dropped in _LEAF.findall(shown)
    ]
    meters = session.net.run(
        ["ovs-ofctl", "-O", "OpenFlow13", "meter-stats", session.net.bridges["E1"]]
    ).stdout
    metered = [
        f"meter {mid}: dropped {dropped} of {seen} pkts"
        for mid, seen, dropped in _METER.findall(meters)
    ]
    return (
        f"enforcement at E1 during the run together, since it was installed: {intf} leaf "
        f"queues {'; '.join(leaves) or 'none'}; {'; '.join(metered) or 'no meters'}"
    )


def _flow(role: Role, options: GuaranteeOptions, scale: Scale, seconds: float) -> ReceivedFlow:
    rate = None
    if role.udp and role.send_factor is not None:
        base = role.booked_mbps if role.booked_mbps is not None else LINK_MBPS
        rate = scale.bps(int(base * role.send_factor * MBPS))
    # UDP datagrams one frame each (IPv4 20 + UDP 8 inside the MTU): no fragments.
    block = options.session.mtu - 28 if role.udp else None
    return ReceivedFlow(seconds, role.port, role.udp, rate, options.omit, block)


def _measure(
    session: EmulationSession,
    options: GuaranteeOptions,
    scale: Scale,
    seconds: float,
    *,
    with_reserved: bool,
) -> dict[str, ReceivedRates]:
    """Every role's flow at once; what each receiver got, per second."""
    roles = [*(RESERVATIONS if with_reserved else ()), *BEST_EFFORT]
    servers = [JsonServer(session.net.host(r.receiver), r.port) for r in roles]
    results: dict[str, ReceivedRates] = {}
    errors: list[BaseException] = []

    def one(role: Role) -> None:
        try:
            flow = _flow(role, options, scale, seconds)
            host = session.net.host(role.sender)
            results[role.name] = run_received(host, session.net.ip(role.receiver), flow)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(r,), daemon=True) for r in roles]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for server in servers:
            server.close()
    if errors:
        raise errors[0]
    return results


def _record(
    report: Report,
    mode: str,
    choice: str,
    loaded: dict[str, ReceivedRates],
    idle: dict[str, ReceivedRates],
    scale: Scale,
    link_bps: int,
    options: GuaranteeOptions,
) -> None:
    for role in (*RESERVATIONS, *BEST_EFFORT):
        report.rows.append(_row(mode, "together", role, loaded[role.name], scale, choice))
    for role in BEST_EFFORT:
        report.rows.append(_row(mode, "reservations idle", role, idle[role.name], scale, choice))
    offset = options.seconds + options.omit + 1
    report.series.setdefault("rates", {})[mode] = {
        "booked_mbps": {r.name: scale.bps(int((r.booked_mbps or 0) * MBPS)) / MBPS
                        for r in RESERVATIONS},
        "link_mbps": link_bps / MBPS,
        "link_goodput_mbps": round(link_goodput(link_bps, options.session.mtu) / MBPS, 3),
        "idle_from_s": offset,
        "flows": {
            role.name: {
                "together": _points(loaded[role.name], 0.0),
                "idle": _points(idle.get(role.name), offset),
            }
            for role in (*RESERVATIONS, *BEST_EFFORT)  # the plot's colours follow this order
        },
    }  # fmt: skip


def _points(rates: ReceivedRates | None, offset: float) -> dict[str, list[float]]:
    """A phase's seconds for the plot, `offset` seconds into the run."""
    if rates is None:
        return {"t": [], "mbps": []}
    return {
        "t": [round(offset + t, 3) for t in rates.interval_ends],
        "mbps": [round(b / MBPS, 3) for b in rates.interval_bps],
    }


def _row(
    mode: str, phase: str, role: Role, got: ReceivedRates, scale: Scale, choice: str
) -> dict[str, Any]:
    booked = scale.bps(int(role.booked_mbps * MBPS)) if role.booked_mbps is not None else None
    policing = _policing(role, choice) if booked is not None else None
    seconds = [b / MBPS for b in got.interval_bps]
    return {
        "mode": mode,
        "phase": phase,
        "flow": role.name,
        "policing": (policing.value if policing else "none") if booked else "best effort",
        "booked_mbps": booked / MBPS if booked else None,
        "sent_mbps": round(got.sent_bps / MBPS, 3),
        "delivered_mbps": round(got.mean_bps / MBPS, 3),
        "percent_of_booked": round(100 * got.mean_bps / booked, 2) if booked else None,
        "lowest_second_mbps": round(min(seconds), 3) if seconds else None,
        "highest_second_mbps": round(max(seconds), 3) if seconds else None,
        "seconds": len(seconds),
    }


def _new_report(options: GuaranteeOptions, scale: Scale, link_bps: int) -> Report:
    booked = ", ".join(
        f"{r.name} {scale.bps(int((r.booked_mbps or 0) * MBPS)) / MBPS:g} Mbit/s "
        f"({r.policing.value if r.policing else 'none'})"
        for r in RESERVATIONS
    )
    return Report(
        experiment="guarantees",
        notes=[
            f"E1 -- E2: one {link_bps / MBPS:g} Mbit/s core link, {ONE_WAY_MS:g} ms each way "
            "(braid-dp): 50 ms round trip on the reserved paths",
            f"reservations E1 -> E2, booked through braid: {booked}; UDP over-senders at 2x "
            "their booking, one greedy TCP (CUBIC) flow in the third; best effort between "
            "other hosts: a UDP flood at line rate and one greedy TCP flow",
            f"policing of the enforced run: {options.policing}; every rate is the receiver's "
            f"(iperf3 server report, per second), {options.seconds:g} s together and "
            f"{options.idle_seconds:g} s with the reservations idle, after {options.omit} s "
            f"of warm-up; MTU {options.session.mtu}; driver {options.session.driver}",
            scale.note(),
            "delivered rates are goodput (UDP or TCP payload); a booking is a link rate, so "
            "a reservation delivers at most its booking less framing (about 0.6 % at MTU 9000)",
        ],
        columns=[
            ("mode", "enforcement"),
            ("phase", "phase"),
            ("flow", "flow"),
            ("policing", "policing"),
            ("booked_mbps", "booked (Mbit/s)"),
            ("sent_mbps", "sent (Mbit/s)"),
            ("delivered_mbps", "delivered (Mbit/s)"),
            ("percent_of_booked", "% of booked"),
            ("lowest_second_mbps", "lowest second"),
            ("highest_second_mbps", "highest second"),
        ],
    )
