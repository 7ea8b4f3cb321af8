"""Reservations held to their rate on real Open vSwitch (Mininet, userspace datapath, root).

The direct driver writes meters with ovs-ofctl and braid's HTB queues with tc
on the switch ports. One 100 Mbit/s link A-B; h1, h3 on A, h2, h4 on B. The
link is not shaped by Mininet: braid's HTB root on the ports with queues
holds the line rate, as it would on a real port. Bounds are loose
correctness checks; `-s` prints the measured figures.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from braid.adapters.emulation.iperf import ClientOptions, IperfServer, run_client
from braid.adapters.emulation.network import EmulatedNetwork, HostSpec
from braid.adapters.emulation.ovs import ensure_ovs, stop_ovs
from braid.adapters.southbound.direct import OfctlDriver
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.switchd_buffer import switchd_send_buffer
from braid.adapters.southbound.tc_queues import BRAID_QDISC
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.rules.changes import install_steps, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import Policing, RulePlan, RuleRequest, Step, StepKind
from braid.emulation.drivers import make_driver
from tests.e2e.emulation_fixtures import emulation_host
from tests.e2e.udp import received as udp_received
from tests.e2e.udp import udp as udp_client

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]

LINE = 100_000_000
RATE = 40_000_000
SECONDS = 8
TOPOLOGY = {
    "nodes": [{"id": "A"}, {"id": "B"}],
    "links": [{"id": "A-B", "a": "A", "b": "B", "capacity": "100M"}],
}
HOSTS = [HostSpec("h1", "A"), HostSpec("h2", "B"), HostSpec("h3", "A"), HostSpec("h4", "B")]
PATH = Path(("A", "B"), ("A-B",))


@pytest.fixture
def net(emulation_host: None) -> Iterator[EmulatedNetwork]:
    # The host's send buffer for OVS is left as it is: braid's leaf queues are short
    # enough for the default one (`tc_queues`). Open vSwitch is started if no
    # emulation before this one left it running, and stopped again after.
    started = ensure_ovs()
    try:
        with EmulatedNetwork(topology(), HOSTS) as network:
            for intf in network.wiring.link_intfs["A-B"]:
                # Mininet shaped the link; braid's queues take over the port instead.
                network.run(["tc", "qdisc", "del", "dev", intf, "root"])
            yield network
    finally:
        stop_ovs(started)


def topology() -> Topology:
    return topology_from_dict(TOPOLOGY)


def compiled(
    net: EmulatedNetwork, pool: LabelPool, name: str, hosts: tuple[str, str], policing: Any
) -> RulePlan:
    request = RuleRequest(name, (Allocation(PATH, RATE),), *hosts, policing=policing)
    return compile_reservation(request, topology(), net.port_map, pool)


def run(driver: SouthboundDriver, steps: tuple[Step, ...]) -> None:
    for step in steps:
        (driver.apply if step.kind is StepKind.APPLY else driver.remove)(step.rule_set)


def udp(net: EmulatedNetwork, client: str, server: str, rate_bps: int, port: int = 5201) -> Any:
    return udp_client(net.host(client), net.ip(server), rate_bps, SECONDS, port)


def received(proc: Any) -> float:
    return udp_received(proc, SECONDS)


def tcp(net: EmulatedNetwork, client: str, server: str) -> float:
    return run_client(net.host(client), net.ip(server), ClientOptions(seconds=SECONDS)).received_bps


def braid_leftovers(net: EmulatedNetwork, driver: SouthboundDriver) -> list[str]:
    """Meters, flows, groups or qdiscs of braid's still on the switches."""
    left = [f"{s}: {r}" for s, r in driver.dump().items() if not r.empty]
    for intf in net.wiring.link_intfs["A-B"]:
        shown = net.run(["tc", "qdisc", "show", "dev", intf]).stdout
        if f"htb {BRAID_QDISC}" in shown:
            left.append(f"{intf}: {shown.strip()}")
    return left


@pytest.fixture(params=["direct", "controller"])
def driver(request: pytest.FixtureRequest, net: EmulatedNetwork) -> Iterator[SouthboundDriver]:
    """The direct driver, or a `braid controller` process's (os-ken)."""
    made, close = make_driver(request.param, net)
    try:
        yield made
    finally:
        close()


def test_a_hard_reservation_is_held_to_its_rate_and_carries_tcp(
    net: EmulatedNetwork, driver: SouthboundDriver
) -> None:
    plan = compiled(net, LabelPool(), "hard", ("h1", "h2"), Policing.HARD)
    run(driver, install_steps(plan))
    assert driver.dump()["A"].meters and driver.dump()["A"].queues
    servers = [IperfServer(net.host("h2"))]
    try:
        over = received(udp(net, "h1", "h2", 2 * RATE))
        through_tcp = tcp(net, "h1", "h2")
    finally:
        for server in servers:
            server.close()
    print(
        f"\n{type(driver).__name__}: hard {RATE / 1e6:.0f} Mbit/s: "
        f"UDP at 2x -> {over / 1e6:.1f} Mbit/s, TCP -> {through_tcp / 1e6:.1f} Mbit/s"
    )
    assert over <= 1.1 * RATE, "the hard reservation carried more than its rate"
    assert through_tcp >= 0.7 * RATE, "TCP through the hard reservation fell far short"
    run(driver, removal_steps(plan))
    assert braid_leftovers(net, driver) == []


def test_a_soft_reservation_keeps_its_rate_under_a_best_effort_flood(
    net: EmulatedNetwork, driver: SouthboundDriver
) -> None:
    soft = compiled(net, LabelPool(), "soft", ("h1", "h2"), Policing.SOFT)
    pool = LabelPool().with_plans([soft])
    flood = compiled(net, pool, "flood", ("h3", "h4"), None)  # routed only: best effort
    run(driver, install_steps(soft))
    run(driver, install_steps(flood))
    servers = [IperfServer(net.host("h2")), IperfServer(net.host("h4"), port=5202)]
    try:
        flooding = udp(net, "h3", "h4", 2 * LINE, port=5202)
        kept = received(udp(net, "h1", "h2", RATE))
        flooded = received(flooding)
    finally:
        for server in servers:
            server.close()
    print(f"\novs-vswitchd's send buffer: {switchd_send_buffer()} bytes")
    print(
        f"{type(driver).__name__}: soft {RATE / 1e6:.0f} Mbit/s under a "
        f"{2 * LINE / 1e6:.0f} Mbit/s best-effort flood: reservation {kept / 1e6:.1f} Mbit/s, "
        f"flood {flooded / 1e6:.1f} Mbit/s"
    )
    assert kept >= 0.8 * RATE, "the flood took the soft reservation's guarantee"
    assert kept + flooded <= 1.1 * LINE, "the port carried more than its line rate"

    run(driver, removal_steps(flood))
    if isinstance(driver, OfctlDriver):
        # A fresh driver (a restarted braid) with nothing desired clears what braid left.
        fresh = OfctlDriver(dict(net.bridges))
        reports = fresh.reconcile()
        assert reports["A"].deleted.queues and reports["A"].deleted.flows
        assert braid_leftovers(net, fresh) == []
    else:
        run(driver, removal_steps(soft))
        assert braid_leftovers(net, driver) == []
