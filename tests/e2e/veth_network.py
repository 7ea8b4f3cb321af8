"""Bridges of a private Open vSwitch joined by veth pairs, as a scenario's topology says.

Each link is a veth pair in the sandbox's namespace with one end on each of
its two bridges, at the port numbers of the scenario's `PortMap`; each host
is a veth pair with one end on its switch's port and the other left in the
namespace as the host's interface. Frames cross real kernel links through
the userspace datapath, as on Mininet. The namespace (and so every veth)
goes with the sandbox.
"""

from __future__ import annotations

import subprocess

from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from tests.unit.core.rules.scenarios import Scenario

__all__ = ["ip", "wire"]


def ip(ovs: OvsSandbox, *args: str) -> None:
    """`ip ARGS` in the sandbox's namespace."""
    subprocess.run(ovs.command_in_namespace(["ip", *args]), check=True)


def _plug(ovs: OvsSandbox, bridge: str, device: str, port: int) -> None:
    ovs.vsctl("add-port", bridge, device, "--", "set", "interface", device,
              f"ofport_request={port}")  # fmt: skip


def wire(ovs: OvsSandbox, scenario: Scenario, controller: str | None = None) -> None:
    """A bridge per switch of `scenario` (connecting to `controller`, if given), its links
    and hosts as veth pairs."""
    ports = scenario.ports
    for name, switch in ports.switches.items():
        ovs.add_bridge(name, switch.dpid, controller)
    for link in scenario.topology.links.values():
        ends = [(end, f"{link.id}-{end}") for end in (link.a, link.b)]
        ip(ovs, "link", "add", ends[0][1], "type", "veth", "peer", "name", ends[1][1])
        for end, device in ends:
            ip(ovs, "link", "set", device, "up")
            _plug(ovs, end, device, ports.link_port(end, link.id))
    for host in ports.hosts.values():
        device, inside = f"{host.host}-sw", f"{host.host}-eth"
        ip(ovs, "link", "add", device, "type", "veth", "peer", "name", inside)
        for end in (device, inside):
            ip(ovs, "link", "set", end, "up")
        _plug(ovs, host.switch, device, host.port)
