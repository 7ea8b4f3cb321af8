"""Seed 003's two sites on Mininet: the network, its link emulators, monitors and meters.

Site A (h1 behind switch A) and site B (h2 behind switch B) are joined by a
primary path A–P–B and a standby A–Q–B. Each path's one-way delay is
declared on its first link (A–P, A–Q), so the session splices braid's link
emulator into it as into any delayed link (`adapters.emulation.link_delay`);
the run raises it at run time (the seed's RTT extension) through that
emulator. Each site runs its own monitor
(probing the far host from its own host's namespace) whose action programs
only its own border switch; nothing but the measured path links them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from braid.adapters.dataplane import LinkEmulator
from braid.adapters.emulation.network import HostSpec
from braid.adapters.failover.actions import SiteAction
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


DELAYED: Final = {"primary": "A-P", "standby": "A-Q"}  # the link carrying each path's delay


def failover_topology(rate_bps: int, delays_ms: Mapping[str, float]) -> dict[str, Any]:
    """Each path's one-way delay (> 0) on its first link, none on its second."""
    latency = {DELAYED[name]: ms for name, ms in delays_ms.items()}
    links = [("A-P", "A", "P"), ("P-B", "P", "B"), ("A-Q", "A", "Q"), ("Q-B", "Q", "B")]
    return {
        "nodes": [{"id": n} for n in ("A", "P", "B", "Q")],
        "links": [
            {"id": i, "a": a, "b": b, "capacity": f"{rate_bps}bps",
             "latency_ms": latency.get(i, 0)}
            for i, a, b in links
        ],
    }  # fmt: skip


def path_emulators(session: EmulationSession) -> dict[str, LinkEmulator]:
    """Each path's link emulator (the one the session spliced into its delayed link)."""
    return {name: session.net.emulators[link] for name, link in DELAYED.items()}


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
    return ControllerDriver(controller.address, timeout=5.0, token=controller.token)


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
