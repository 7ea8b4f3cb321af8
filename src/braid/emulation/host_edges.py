"""braid's multipath edge between an emulated host and its switch (packet splitting).

A Mininet host has one interface, `<h>-eth0`, cabled to its switch. To put
an edge in front of it, inside the host's namespace: the host's address and
MAC move to a new veth end `<h>-app` (MTU 4 bytes lower, so a frame with the
path's 802.1Q tag is no longer than an untagged full-size one), and
`braid-dp edge` forwards between its peer `<h>-edg` and `<h>-eth0`. `eth0`
gets a MAC of its own, so the host's stack never takes the tagged frames
meant for the edge. The hosts know each other's MAC (static neighbours):
ARP would otherwise need the edge to tag it. The switch ports stay as they
are, so the compiled rules see the host where they expect it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Final

from braid.adapters.dataplane import EdgeConfig, MultipathEdge, edge_config
from braid.adapters.emulation.iperf import MARK
from braid.core.rules.packet_split import EdgeSide
from braid.emulation.session import EmulationSession

__all__ = ["TAG_BYTES", "edge_ready_hosts", "passing_edges", "running_edges"]

TAG_BYTES: Final = 4
_OFFLOADS: Final = "tx off tso off gso off gro off"


def _names(mininet_name: str) -> tuple[str, str, str]:
    return f"{mininet_name}-eth0", f"{mininet_name}-app", f"{mininet_name}-edg"


def edge_ready_hosts(session: EmulationSession, hosts: Sequence[str]) -> None:
    """Move each host's address to `<h>-app`, leaving `eth0` and `<h>-edg` to an edge."""
    wiring = session.net.wiring
    for index, name in enumerate(hosts, start=1):
        host, port = session.net.host(name), wiring.hosts[name]
        eth0, app, edg = _names(host.name)
        for line in (
            f"ip link add {app} type veth peer name {edg}",
            f"ip addr flush dev {eth0}",
            f"ip link set {eth0} address 02:00:00:00:ee:{index:02x}",
            f"ip link set {app} address {port.mac}",
            f"ip link set {app} mtu {session.options.mtu - TAG_BYTES} up",
            f"ip link set {edg} mtu {session.options.mtu} up",
            f"ip addr add {port.ipv4}/8 dev {app}",
        ):
            host.cmd(line)
        for interface in (eth0, app, edg):
            host.cmd(f"ethtool -K {interface} {_OFFLOADS} >/dev/null 2>&1")
        for other, peer in wiring.hosts.items():
            if other != name:
                host.cmd(f"ip neigh replace {peer.ipv4} lladdr {peer.mac} dev {app} nud permanent")


@contextlib.contextmanager
def running_edges(
    session: EmulationSession, sides: Sequence[EdgeSide]
) -> Iterator[dict[str, MultipathEdge]]:
    """One `braid-dp edge` per side, in its host's namespaces, with the plan's config."""
    with _edges(session, [(side.host, edge_config(side)) for side in sides]) as edges:
        yield edges


@contextlib.contextmanager
def passing_edges(
    session: EmulationSession, hosts: Sequence[str]
) -> Iterator[dict[str, MultipathEdge]]:
    """Edges with no reservation, passing every frame unchanged: an edge-ready host's
    traffic for anything but packet splitting (per-flow rules, MPTCP)."""
    with _edges(session, [(host, EdgeConfig()) for host in hosts]) as edges:
        yield edges


@contextlib.contextmanager
def _edges(
    session: EmulationSession, configs: Sequence[tuple[str, EdgeConfig]]
) -> Iterator[dict[str, MultipathEdge]]:
    key, value = MARK.split("=", 1)
    with contextlib.ExitStack() as stack:
        edges: dict[str, MultipathEdge] = {}
        for name, config in configs:
            host = session.net.host(name)
            eth0, _, edg = _names(host.name)
            edge = MultipathEdge(edg, eth0, config).launched(
                ["mnexec", "-a", str(host.pid)], {key: value}
            )
            edges[name] = stack.enter_context(edge)
        yield edges
