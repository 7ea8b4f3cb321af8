"""Every domain holds a reservation's rates on its own Open vSwitch bridge: real agent and
orchestrator processes, bridges of a private Open vSwitch joined by veth links.

The network of `test_domain_southbound` at a rate a shared machine carries: site A
behind SDX x1, two WANs with 12 Mbit/s cores, SDX x2 in front of site B, so 20 Mbit/s
splits over both WANs and each SDX bridges two ways. Each of the two sites and two SDXs
has a bridge its agent programs (`--southbound`, enforcement on, hard policing); each
WAN is a bridge the test programs as the WAN's own system would, carrying a path's
VLAN from one SDX to the other. The two hosts live in namespaces of their own, so
their traffic crosses every bridge. Bounds on the traffic are loose correctness
checks; `-s` prints the measured figures.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from braid.adapters.emulation.iperf import IperfServer
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.southbound.ofctl_stats import parse_meter_counts
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.adapters.southbound.switchd_buffer import switchd_send_buffer
from braid.bootstrap.local_cluster import LocalCluster
from tests.e2e.udp import received, udp
from tests.e2e.veth_network import HostNamespace, host, link
from tests.e2e.waiting import wait_for
from tests.integration.negotiation.test_domain_southbound import NET, WIRING

pytestmark = pytest.mark.e2e

M = 10**6
RATE = 20 * M
SECONDS = 5
CORES = {"w1-core": "12M", "w2-core": "12M"}
# The whole network at Mbit/s: every link between domains 100 Mbit/s.
SLOW_NET = {
    **NET,
    "links": [{**ln, "capacity": CORES.get(ln["id"], "100M")} for ln in NET["links"]],
}
BRIDGES = {"site-a": "br-a", "x1": "br-x1", "x2": "br-x2", "site-b": "br-b"}
# Each WAN's own switch: its port 1 faces x1, port 2 faces x2.
WANS = {"w1": ("br-w1", {"x1-w1": 1, "w1-x2": 2}), "w2": ("br-w2", {"x1-w2": 1, "w2-x2": 2})}
HOSTS = {"ha": ("site-a", "a-lan", "10.0.0.1"), "hb": ("site-b", "b-lan", "10.0.0.2")}
DOMAIN_OF = {node["id"]: node["domain"] for node in NET["nodes"]}
DOMAIN_LINKS = {ln["id"] for ln in NET["links"] if DOMAIN_OF[ln["a"]] != DOMAIN_OF[ln["b"]]}
# A braid class in `tc class show`, its rates rounded as tc prints them (10Mbit).
CLASS = re.compile(
    r"class htb b7a1:([0-9a-f]+) parent .* rate (\d+)([KMG]?)bit ceil (\d+)([KMG]?)bit"
)
UNIT = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}


def _ports(domain: str) -> dict[str, int]:
    if domain in WANS:
        return WANS[domain][1]
    (switch,) = WIRING[domain]["switches"]
    return dict(switch["ports"])


def _bridge(domain: str) -> str:
    return WANS[domain][0] if domain in WANS else BRIDGES[domain]


@dataclass
class World:
    ovs: OvsSandbox
    cluster: LocalCluster
    hosts: dict[str, HostNamespace]

    def tc(self, *args: str) -> str:
        shown = subprocess.run(
            ["tc", "-n", self.ovs.netns, *args], capture_output=True, text=True, check=True
        )
        return shown.stdout

    def device(self, domain: str, link: str) -> str:
        return f"{link}-{_bridge(domain)}"


def _wire(ovs: OvsSandbox) -> dict[str, HostNamespace]:
    """Every bridge, a veth per link between two of them, and the two hosts."""
    for domain, bridge in BRIDGES.items():
        ovs.add_bridge(bridge, WIRING[domain]["switches"][0]["dpid"])
    for i, (bridge, _) in enumerate(WANS.values()):
        ovs.add_bridge(bridge, 51 + i)
    for each in NET["links"]:
        a, b = DOMAIN_OF[each["a"]], DOMAIN_OF[each["b"]]
        if a != b:
            link(ovs, each["id"], (_bridge(a), _ports(a)[each["id"]]),
                 (_bridge(b), _ports(b)[each["id"]]))  # fmt: skip
    hosts = {}
    for name, (domain, lan, address) in HOSTS.items():
        device = host(ovs, name, BRIDGES[domain], _ports(domain)[lan])
        hosts[name] = HostNamespace(ovs, name, device, address)
    hosts["ha"].knows(hosts["hb"])
    hosts["hb"].knows(hosts["ha"])
    return hosts


def _agent_args(ovs: OvsSandbox, folder: Path, domain: str) -> list[str]:
    (switch,) = WIRING[domain]["switches"]
    wiring = {
        # The bridges' ports are in the sandbox's namespace: tc writes the queues there.
        "drivers": {"direct": {"rundir": str(ovs.rundir), "netns": ovs.netns}},
        "switches": [{**switch, "driver": "direct", "bridge": BRIDGES[domain]}],
    }
    path = folder / f"{domain}-wiring.yaml"
    path.write_text(yaml.safe_dump(wiring))
    return ["--southbound", str(path), "--provision-lead", "5"]


@pytest.fixture
def world(ovs: OvsSandbox, tmp_path: Path) -> Iterator[World]:
    with running_world(ovs, tmp_path) as made:
        yield made


@contextmanager
def running_world(ovs: OvsSandbox, tmp_path: Path) -> Iterator[World]:
    """The bridges wired, and an agent per programmed domain and the orchestrator running."""
    hosts = _wire(ovs)
    source = tmp_path / "net.yaml"
    source.write_text(yaml.safe_dump(SLOW_NET))
    domain_args = {d: _agent_args(ovs, tmp_path, d) for d in BRIDGES}
    cluster = LocalCluster(
        source, tmp_path / "run", orchestrator_args=["--timeout", "2"], domain_args=domain_args
    )
    try:
        with cluster:
            yield World(ovs, cluster, hosts)
    finally:
        for each in hosts.values():
            each.close()


def _reserve(world: World, rid: str, policing: str) -> pb.ReservationResp:
    now = int(time.time())
    request = pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=RATE,
        window=pb.Window(start=now + 3, end=now + 3600),  # within the lead: rules go in now
        strategy=pb.STRATEGY_PARTIAL_OFFERS,
        max_paths=2,
        policing=policing,
    )
    reply = world.cluster.reserve(request)
    assert reply.success, reply.reason
    assert len(reply.paths) == 2, "20 Mbit/s over two 12 Mbit/s WANs"
    _carry_over_wans(world.ovs, reply)
    assert wait_for(lambda: _installed(world, reply)), "every domain's queues"
    return reply


def _carry_over_wans(ovs: OvsSandbox, reply: pb.ReservationResp) -> None:
    """Each WAN's own system: a path's VLAN in from one SDX leaves to the other with the
    VLAN the WAN picked on that side, both ways."""
    for path in reply.paths:
        vlans = {choice.link: choice.vlan for choice in path.vlans}
        for bridge, ports in WANS.values():
            (x1_side, x2_side) = ports
            if x1_side not in vlans:
                continue
            ends = [(ports[x1_side], vlans[x1_side]), (ports[x2_side], vlans[x2_side])]
            for (port_in, vlan_in), (port_out, vlan_out) in (ends, ends[::-1]):
                ovs.ofctl("add-flow", bridge, f"in_port={port_in},dl_vlan={vlan_in},"
                          f"actions=mod_vlan_vid:{vlan_out},output:{port_out}")  # fmt: skip


def _expected_queues(reply: pb.ReservationResp) -> dict[tuple[str, str], dict[int, int]]:
    """(domain, link) -> {VLAN: rate}: every way between domains leaves in a queue of its
    own at its path's share, on the port of each programmed end of its link."""
    expected: dict[tuple[str, str], dict[int, int]] = {}
    for path in reply.paths:
        for choice in path.vlans:
            for domain in BRIDGES:
                if choice.link in _ports(domain):
                    expected.setdefault((domain, choice.link), {})[choice.vlan] = path.bandwidth_bps
    return expected


def _queue_classes(world: World, domain: str, link: str) -> dict[int, tuple[int, int]]:
    """braid's queue classes on a port, read back with tc: VLAN -> (rate, ceil) in bit/s."""
    classes = {}
    for found in CLASS.finditer(world.tc("class", "show", "dev", world.device(domain, link))):
        minor, rate, rate_unit, ceil, ceil_unit = found.groups()
        if int(minor, 16) > 0x1000:
            classes[int(minor, 16) - 0x1000] = (
                int(rate) * UNIT[rate_unit],
                int(ceil) * UNIT[ceil_unit],
            )
    return classes


def _meter_rates(ovs: OvsSandbox, bridge: str) -> list[int]:
    """The drop band's rate (kbit/s) of every meter on `bridge`."""
    return [int(r) for r in re.findall(r"type=drop rate=(\d+)", ovs.ofctl("dump-meters", bridge))]


def _dropped_by_meters(ovs: OvsSandbox, bridge: str) -> int:
    """Packets the meters on `bridge` dropped (their drop bands' counts)."""
    counts = parse_meter_counts(ovs.ofctl("meter-stats", bridge))
    return sum(packets for packets, _ in counts.values())


def _leftovers(world: World, domains: Iterable[str] = BRIDGES) -> list[str]:
    """Anything of braid's on the bridges of `domains`: a flow with its cookie, a group, a
    meter, or braid's qdisc on a port."""
    left = []
    for domain in domains:
        bridge = BRIDGES[domain]
        flows = world.ovs.ofctl("dump-flows", bridge).splitlines()
        groups = world.ovs.ofctl("dump-groups", bridge).splitlines()
        left += [f"{bridge}: {ln}" for ln in flows if "0xb7a1" in ln]
        left += [f"{bridge}: {ln}" for ln in groups if "group_id" in ln]
        left += [f"{bridge}: meter at {r} kbit/s" for r in _meter_rates(world.ovs, bridge)]
        for link_id in sorted(set(_ports(domain)) & DOMAIN_LINKS):
            device = world.device(domain, link_id)
            shown = world.tc("qdisc", "show", "dev", device).splitlines()
            left += [f"{device}: {ln}" for ln in shown if "htb b7a1: root" in ln]
    return left


def _cancel(world: World, rid: str) -> None:
    cancelled = world.cluster.orchestrator().Cancel(pb.CancelQuery(id=rid), timeout=10)
    assert cancelled.status == "cancelled", cancelled


def _cancel_leaves_nothing(world: World, rid: str) -> None:
    _cancel(world, rid)
    assert wait_for(lambda: not _leftovers(world)), _leftovers(world)


def _installed(world: World, reply: pb.ReservationResp) -> bool:
    """Every queue of every way in place."""
    return all(
        set(queues) <= set(_queue_classes(world, domain, link_id))
        for (domain, link_id), queues in _expected_queues(reply).items()
    )


def _assert_queues(world: World, reply: pb.ReservationResp, ceiling: int | None) -> None:
    """Each way's queue is guaranteed its share, and may take up to `ceiling` (None: the
    share, as for hard)."""
    for (domain, link_id), queues in _expected_queues(reply).items():
        held = _queue_classes(world, domain, link_id)
        wanted = {vlan: (rate, ceiling or rate) for vlan, rate in queues.items()}
        assert held == wanted, (domain, link_id)


def test_a_soft_reservation_queues_every_way_up_to_its_link(world: World) -> None:
    reply = _reserve(world, "r-soft", "soft")
    _assert_queues(world, reply, ceiling=100 * M)
    assert all(_meter_rates(world.ovs, bridge) == [] for bridge in BRIDGES.values())
    _cancel_leaves_nothing(world, "r-soft")


def test_a_hard_reservation_is_held_in_every_domain_and_cancel_leaves_nothing(
    world: World,
) -> None:
    reply = _reserve(world, "r-hard", "hard")
    _assert_queues(world, reply, ceiling=None)
    # Each site's traffic enters through a meter at the reservation's rate; the SDXs
    # meter nothing.
    assert wait_for(lambda: all(_meter_rates(world.ovs, b) for b in ("br-a", "br-b")))
    for site in ("site-a", "site-b"):
        assert _meter_rates(world.ovs, BRIDGES[site]) == [RATE // 1000], site
    assert _meter_rates(world.ovs, "br-x1") == _meter_rates(world.ovs, "br-x2") == []

    server = IperfServer(world.hosts["hb"])
    try:
        sent = udp(world.hosts["ha"], "10.0.0.2", 2 * RATE, SECONDS, length=1400)
        got = received(sent, SECONDS)
    finally:
        server.close()
    dropped = _dropped_by_meters(world.ovs, "br-a")
    shares = sorted(p.bandwidth_bps for p in reply.paths)
    print(f"\nhard {RATE / M:.0f} Mbit/s over ways of {[s / M for s in shares]} Mbit/s: "
          f"one UDP flow at 2x -> {got / M:.1f} Mbit/s; site A's meter dropped {dropped} "
          "packets")  # fmt: skip
    # One flow takes one way (the edge's select group hashes it): held to that way's share.
    assert got <= 1.1 * shares[-1], "the flow got more than its way's share"
    assert got >= 0.5 * shares[0], "the reservation's traffic did not get through"
    assert dropped > 0, "site A's meter held nothing back of twice its rate"
    # The sandbox's ovs-vswitchd has made its packet socket: its buffer, which sets how
    # deep the agents' queues are, is seen from the bridges' namespace.
    assert switchd_send_buffer(world.ovs.netns) is not None

    _cancel_leaves_nothing(world, "r-hard")


def test_an_agent_killed_while_installed_clears_its_bridge_after_cancel_and_restart(
    world: World,
) -> None:
    reply = _reserve(world, "r-crash", "hard")
    # A restart while the reservation stands: its reconcile keeps the queues as they are.
    world.cluster.kill("x1")
    world.cluster.start_agent("x1")
    assert wait_for(lambda: _held_exactly(world, reply)), "x1's queues after its restart"
    _assert_queues(world, reply, ceiling=None)
    world.cluster.kill("x1")  # kill -9: x1's rules and queues stay on its bridge
    _cancel(world, "r-crash")
    others = [d for d in BRIDGES if d != "x1"]
    assert wait_for(lambda: not _leftovers(world, others)), _leftovers(world, others)
    assert _leftovers(world, ["x1"]), "the killed agent's bridge kept what it held"
    world.cluster.start_agent("x1")
    assert wait_for(lambda: not _leftovers(world)), _leftovers(world)


def _held_exactly(world: World, reply: pb.ReservationResp) -> bool:
    """Every programmed inter-domain port holds exactly `reply`'s queues, no other."""
    expected = _expected_queues(reply)
    for domain in BRIDGES:
        for link_id in sorted(set(_ports(domain)) & DOMAIN_LINKS):
            wanted = expected.get((domain, link_id), {})
            if set(_queue_classes(world, domain, link_id)) != set(wanted):
                return False
    return True


def test_a_modify_moves_every_domain_s_queues_and_meters_to_the_new_rates(
    world: World,
) -> None:
    old = _reserve(world, "r-mod", "hard")
    less = 16 * M
    new = world.cluster.orchestrator().Modify(
        pb.ModifyQuery(id="r-mod", bandwidth_bps=less), timeout=30
    )
    assert new.success, new.reason
    _carry_over_wans(world.ovs, new)
    assert {c.vlan for p in new.paths for c in p.vlans}.isdisjoint(
        {c.vlan for p in old.paths for c in p.vlans}
    )
    assert wait_for(lambda: _held_exactly(world, new)), "the new version's queues alone"
    _assert_queues(world, new, ceiling=None)
    edges = ("br-a", "br-b")
    assert wait_for(lambda: all(_meter_rates(world.ovs, b) == [less // 1000] for b in edges)), [
        _meter_rates(world.ovs, b) for b in edges
    ]
    _cancel_leaves_nothing(world, "r-mod")
