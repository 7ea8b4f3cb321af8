"""Bridges of a private Open vSwitch joined by veth pairs, as a scenario's topology says.

Each link is a veth pair in the sandbox's namespace with one end on each of
its two bridges, at the port numbers of the scenario's `PortMap`; each host
is a veth pair with one end on its switch's port and the other left in the
namespace as the host's interface. Frames cross real kernel links through
the userspace datapath, as on Mininet. The namespace (and so every veth)
goes with the sandbox. A host that must send real traffic (iperf3) gets a
namespace of its own (`HostNamespace`): two hosts in the sandbox's one
namespace would talk to each other over its loopback, not through the bridges.
"""

from __future__ import annotations

import subprocess
from typing import Any

from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from tests.unit.core.rules.scenarios import Scenario

__all__ = ["HostNamespace", "host", "ip", "link", "wire"]


def ip(ovs: OvsSandbox, *args: str) -> None:
    """`ip ARGS` in the sandbox's namespace."""
    subprocess.run(ovs.command_in_namespace(["ip", *args]), check=True)


def _plug(ovs: OvsSandbox, bridge: str, device: str, port: int) -> None:
    ovs.vsctl("add-port", bridge, device, "--", "set", "interface", device,
              f"ofport_request={port}")  # fmt: skip


def link(ovs: OvsSandbox, name: str, a: tuple[str, int], b: tuple[str, int]) -> None:
    """Link `name` as a veth pair from (bridge, port) `a` to `b`; its ends are NAME-BRIDGE."""
    ends = [(bridge, port, f"{name}-{bridge}") for bridge, port in (a, b)]
    ip(ovs, "link", "add", ends[0][2], "type", "veth", "peer", "name", ends[1][2])
    for bridge, port, device in ends:
        ip(ovs, "link", "set", device, "up")
        _plug(ovs, bridge, device, port)


def host(ovs: OvsSandbox, name: str, bridge: str, port: int) -> str:
    """Host `name` on (bridge, port): a veth pair; returns its own end (NAME-eth)."""
    device, inside = f"{name}-sw", f"{name}-eth"
    ip(ovs, "link", "add", device, "type", "veth", "peer", "name", inside)
    for end in (device, inside):
        ip(ovs, "link", "set", end, "up")
    _plug(ovs, bridge, device, port)
    return inside


def wire(ovs: OvsSandbox, scenario: Scenario, controller: str | None = None) -> None:
    """A bridge per switch of `scenario` (connecting to `controller`, if given), its links
    and hosts as veth pairs."""
    ports = scenario.ports
    for name, switch in ports.switches.items():
        ovs.add_bridge(name, switch.dpid, controller)
    for between in scenario.topology.links.values():
        ends = [(end, ports.link_port(end, between.id)) for end in (between.a, between.b)]
        link(ovs, between.id, ends[0], ends[1])
    for at in ports.hosts.values():
        host(ovs, at.host, at.switch, at.port)


class HostNamespace:
    """A host's interface moved from the sandbox into a namespace of its own, with an
    address (/24) and the MAC addresses of its peers fixed (no ARP needed). Runs
    commands there (`popen`, as a Mininet host does); `close` deletes the namespace.
    The interface sends with TX checksum offload off, as on Mininet (`EmulatedNetwork`):
    the userspace datapath does not fill checksums in."""

    def __init__(self, ovs: OvsSandbox, name: str, device: str, address: str) -> None:
        self.name, self.device, self.address = name, device, address
        self.netns = f"{ovs.netns}-{name}"
        subprocess.run(["ip", "netns", "add", self.netns], check=True)
        ip(ovs, "link", "set", device, "netns", self.netns)
        for args in (
            ["link", "set", "lo", "up"],
            ["addr", "add", f"{address}/24", "dev", device],
            ["link", "set", device, "up"],
        ):
            self.ip(*args)
        subprocess.run(["ip", "netns", "exec", self.netns, "ethtool", "-K", device, "tx", "off"],
                       capture_output=True, check=True)  # fmt: skip

    def ip(self, *args: str) -> None:
        subprocess.run(["ip", "-n", self.netns, *args], check=True)

    def IP(self) -> str:  # noqa: N802 - Mininet's name, as `iperf.Shell` asks
        return self.address

    @property
    def mac(self) -> str:
        shown = subprocess.run(
            ["ip", "-n", self.netns, "-o", "link", "show", self.device],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return shown.split("link/ether ", 1)[1].split()[0]

    def knows(self, peer: HostNamespace) -> None:
        """A permanent neighbour entry for `peer`: nothing but the test's traffic flows."""
        self.ip("neigh", "replace", peer.address, "lladdr", peer.mac, "dev", self.device)

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        return subprocess.Popen(["ip", "netns", "exec", self.netns, *argv], **kwargs)

    def close(self) -> None:
        subprocess.run(["ip", "netns", "delete", self.netns], check=False)
