"""Seed 003's two sites on Mininet: the network, its link emulators, monitors and meters.

Site A (h1 behind switch A) and site B (h2 behind switch B) are joined by a
primary path A–P–B and a standby A–Q–B. P and Q are not switches: their
bridges are emptied and braid's link emulator (`braid-dp link`) forwards
between the two veths instead, with the path's one-way delay, which it can
raise at run time (the seed's RTT extension). Each site runs its own monitor
(probing the far host from its own host's namespace) whose action programs
only its own border switch; nothing but the measured path links them.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from braid.adapters.dataplane import LinkEmulator, LinkSettings
from braid.adapters.emulation.network import HostSpec
from braid.adapters.failover.actions import SiteAction
from braid.adapters.failover.counters import InterfaceRate
from braid.adapters.failover.eventlog import EventLog
from braid.adapters.failover.probe import UdpEcho
from braid.adapters.failover.runner import MonitorConfig, MonitorSummary, run_monitor
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.direct import OfctlDriver
from braid.adapters.southbound.driver import SouthboundDriver
from braid.core.failover import DetectionRule
from braid.core.model.booking import Allocation
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import RulePlan, RuleRequest, RuleSet
from braid.emulation.session import EmulationSession, path_of

SITES: Final = {"A": ("h1", "h2"), "B": ("h2", "h1")}  # site -> (its host, the far host)
HOSTS: Final = (HostSpec("h1", "A"), HostSpec("h2", "B"))
ROUTES: Final = {"primary": ("A", "P", "B"), "standby": ("A", "Q", "B")}
MIDDLE: Final = {"primary": "P", "standby": "Q"}
ECHO_PORT: Final = 7007
QUEUE_SECONDS: Final = 0.005  # short link queues: CUBIC's standing queue must not look like a
# degradation to an RTT threshold of tens of milliseconds


def failover_topology(rate_bps: int) -> dict[str, Any]:
    """Latency 0 on every link: the paths' delays are the link emulators' put in P and Q."""
    links = [("A-P", "A", "P"), ("P-B", "P", "B"), ("A-Q", "A", "Q"), ("Q-B", "Q", "B")]
    return {
        "nodes": [{"id": n} for n in ("A", "P", "B", "Q")],
        "links": [
            {"id": i, "a": a, "b": b, "capacity": f"{rate_bps}bps", "latency_ms": 0}
            for i, a, b in links
        ],
    }


def compile_paths(session: EmulationSession, bandwidth: int) -> dict[str, RulePlan]:
    """One plan per path, with their own VLANs and groups, so both can sit in the switches."""
    plans: dict[str, RulePlan] = {}
    for name, nodes in ROUTES.items():
        request = RuleRequest(
            "failover", (Allocation(path_of(session.topology, nodes), bandwidth),), "h1", "h2"
        )
        pool = LabelPool().with_plans(plans.values())
        plans[name] = compile_reservation(request, session.topology, session.net.port_map, pool)
    return plans


def site_rules(plans: Mapping[str, RulePlan], site: str) -> dict[str, RuleSet]:
    """A site's entry rules per path: all its fail-over action writes."""
    return {name: next(r for r in plan.entry if r.switch == site) for name, plan in plans.items()}


def install_all(driver: SouthboundDriver, plans: Mapping[str, RulePlan], active: str) -> None:
    """Both paths' forwarding (VLANs and groups of their own), then the active path's entry."""
    for plan in plans.values():
        for rule_set in plan.forwarding:
            driver.apply(rule_set)
    for rule_set in plans[active].entry:
        driver.apply(rule_set)


def short_queues(session: EmulationSession) -> None:
    net = session.net
    for link in session.topology.links.values():
        limit = max(int(link.capacity / 8 * QUEUE_SECONDS), 4 * (net.mtu + 18))
        for intf in net.wiring.link_intfs[link.id]:
            net.run(["tc", "qdisc", "replace", "dev", intf, "parent", "5:1", "handle", "10:",
                     "bfifo", "limit", str(limit)])  # fmt: skip


@contextlib.contextmanager
def emulated_paths(
    session: EmulationSession, delays_ms: Mapping[str, float]
) -> Iterator[dict[str, LinkEmulator]]:
    """Replace P's and Q's bridges by link emulators with the paths' one-way delays."""
    net = session.net
    with contextlib.ExitStack() as stack:
        emulators: dict[str, LinkEmulator] = {}
        for name, node in MIDDLE.items():
            bridge = net.bridges[node]
            intfs = [net.wiring.link_intfs[link][0 if session.topology.links[link].a == node
                     else 1] for link in net.wiring.link_ports[node]]  # fmt: skip
            for intf in intfs:
                net.run(["ovs-vsctl", "--if-exists", "del-port", bridge, intf])
                net.run(["ethtool", "-K", intf, "tx", "off", "tso", "off", "gso", "off",
                         "gro", "off"])  # fmt: skip
            emulator = LinkEmulator(
                intfs[0], intfs[1], settings=LinkSettings(delay_ms=delays_ms[name])
            )
            emulators[name] = stack.enter_context(emulator)
        yield emulators


@dataclass
class Site:
    name: str
    log_path: Path
    log: EventLog
    action: SiteAction
    config: MonitorConfig
    stop: threading.Event = field(default_factory=threading.Event)
    summary: MonitorSummary | None = None
    thread: threading.Thread | None = None

    def start(self) -> None:
        def run() -> None:
            self.summary = run_monitor(self.config, self.action, self.stop, log=self.log)

        self.thread = threading.Thread(target=run, name=f"monitor-{self.name}", daemon=True)
        self.thread.start()

    def finish(self) -> MonitorSummary:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.log.close()
        self.action.close()
        return self.summary or MonitorSummary()


def method_driver(method: str, session: EmulationSession, site: str) -> SouthboundDriver:
    """The site's own driver: ovs-ofctl on its bridge, or the session's braid controller."""
    if method == "direct":
        return OfctlDriver({site: session.net.bridges[site]})
    controller = session.live_driver
    if not isinstance(controller, ControllerDriver):
        raise RuntimeError("the controller method needs a session with --driver controller")
    return ControllerDriver(controller.address, timeout=5.0)


def make_sites(
    session: EmulationSession,
    plans: Mapping[str, RulePlan],
    method: str,
    rule: DetectionRule,
    workdir: Path,
    extra: int = 0,
    rate_hz: float = 10.0,
) -> dict[str, Site]:
    sites = {}
    for site, (own, far) in SITES.items():
        action = SiteAction(method_driver(method, session, site), site_rules(plans, site), extra)
        config = MonitorConfig(
            target=session.net.ip(far),
            port=ECHO_PORT,
            rule=rule,
            rate_hz=rate_hz,
            timeout=0.5,
            netns=f"/proc/{session.net.host(own).pid}/ns/net",
        )
        log_path = workdir / f"monitor-{site}.jsonl"
        sites[site] = Site(site, log_path, EventLog(log_path), action, config)
    return sites


@contextlib.contextmanager
def echoes(session: EmulationSession) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for host in ("h1", "h2"):
            netns = f"/proc/{session.net.host(host).pid}/ns/net"
            stack.enter_context(UdpEcho(ECHO_PORT, netns))
        yield


class RateSampler:
    """Throughput delivered to h2 (its switch port's transmit counter), every `step` seconds."""

    def __init__(self, session: EmulationSession, step: float = 0.1) -> None:
        port = session.net.wiring.hosts["h2"].port
        self.reader = InterfaceRate(f"{session.net.bridges['B']}-eth{port}", "tx")
        self.step = step
        self.times: list[float] = []
        self.rates: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RateSampler:
        self.reader.read()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        next_at = time.monotonic() + self.step
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            next_at += self.step
            bps = self.reader.read()
            if bps is not None:
                self.times.append(time.time())
                self.rates.append(bps)
