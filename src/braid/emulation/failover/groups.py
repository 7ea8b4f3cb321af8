"""Seed 003's two sites with no monitor at all: fast-failover groups, with or without BFD.

The primary path with the standby as its backup, compiled into an OpenFlow
fast-failover group at each site's border switch (the group's first bucket
watches the port toward the primary's middle switch). The switch falls over
by itself when that port is not live:

- `ff`: liveness is the port's carrier, so a local link-down is seen at
  once, and a cut in the middle of the long haul (braid-dp's link emulator
  drops every frame; the border port stays up) is never seen;
- `ff-bfd`: BFD runs on the border switches' long-haul interfaces, across
  the middle switch (which relays BFD's control packets like the circuit
  it stands for): a mid-path cut takes the session down after about three
  intervals, and with it the watched port's liveness.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from braid.adapters.emulation.bfd import BfdSettings, bfd_forwarding, relay_bfd, set_bfd
from braid.adapters.emulation.probe import ProbeRun
from braid.adapters.southbound.direct import OfctlDriver
from braid.core.model.booking import Allocation
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import RulePlan, RuleRequest
from braid.emulation.failover.lab import MIDDLE, ROUTES, install_all
from braid.emulation.failover.measure import outage_ms
from braid.emulation.session import EmulationSession, path_of

__all__ = [
    "GROUP_METHODS",
    "bfd_off",
    "bfd_on",
    "border_interfaces",
    "compile_group",
    "link_down_outage",
    "wait_bfd_up",
]

GROUP_METHODS: Final = ("ff", "ff-bfd")
BFD_UP_S: Final = 15.0  # a session comes up in a few 1 s intervals (RFC 5880: slow until up)
# Each path's long-haul links: (border A to the middle, the middle to border B).
LONG_HAUL: Final = {"primary": ("A-P", "P-B"), "standby": ("A-Q", "Q-B")}


def compile_group(
    session: EmulationSession, plans: Mapping[str, RulePlan], bandwidth: int
) -> RulePlan:
    """The primary with the standby behind it in a fast-failover group, at both sites.

    Its VLANs and groups are its own; its entry rules match what the paths'
    entry rules match, so installing it takes the sites' traffic over.
    """
    request = RuleRequest(
        "fast-failover",
        (Allocation(path_of(session.topology, ROUTES["primary"]), bandwidth),),
        "h1",
        "h2",
        standby=path_of(session.topology, ROUTES["standby"]),
    )
    pool = LabelPool().with_plans(plans.values())
    return compile_reservation(request, session.topology, session.net.port_map, pool)


def border_interfaces(session: EmulationSession) -> list[str]:
    """The border switches' long-haul interfaces: A's toward P and Q, B's toward P and Q."""
    intfs = session.net.wiring.link_intfs
    found = []
    for first, second in LONG_HAUL.values():
        found += [intfs[first][0], intfs[second][1]]
    return found


def bfd_on(session: EmulationSession, settings: BfdSettings) -> None:
    """BFD across each long haul: relayed by its middle switch, run at both borders."""
    ports = session.net.port_map
    for path, (first, second) in LONG_HAUL.items():
        middle = MIDDLE[path]
        relay = (ports.link_port(middle, first), ports.link_port(middle, second))
        relay_bfd(session.net.bridges[middle], relay)
    set_bfd(border_interfaces(session), settings)


def wait_bfd_up(session: EmulationSession, timeout: float = BFD_UP_S) -> None:
    """Until every border session says it forwards; else a clear error (nothing measured).

    A session that never came up would leave its port not live from the start,
    and the group on the standby before any cut: the figures would mean nothing.
    """
    interfaces = border_interfaces(session)
    deadline = time.monotonic() + timeout
    while True:
        down = [i for i in interfaces if bfd_forwarding(i) is not True]
        if not down:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"BFD did not come up within {timeout:g} s on {', '.join(down)}")
        time.sleep(0.2)


def bfd_off(session: EmulationSession) -> None:
    set_bfd(border_interfaces(session), None)


def link_down_outage(
    session: EmulationSession, harness: OfctlDriver, plan: RulePlan, work: Path, probe_port: int
) -> float:
    """The group's outage when A's own port toward P goes down: the longest probe gap, ms."""
    install_all(harness, {"ff": plan}, "ff")
    port = session.net.wiring.link_intfs["A-P"][0]
    probe = ProbeRun(session.net.host("h1"), session.net.host("h2"), session.net.ip("h2"),
                     port=probe_port, rate=1000, seconds=2.0, workdir=work)  # fmt: skip
    time.sleep(1.0)  # the sender started as the constructor returned: a second of traffic
    cut = time.time()
    session.net.run(["ip", "link", "set", port, "down"])
    try:
        trace = probe.finish()
    finally:
        session.net.run(["ip", "link", "set", port, "up"])
    return outage_ms(trace, cut - 0.1, cut + 0.9)
