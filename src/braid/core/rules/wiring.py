"""The physical wiring the compiler needs: switch ports of links, host attachments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from braid.core.errors import InputError
from braid.core.rules.addresses import canonical_ipv4, canonical_mac

__all__ = ["HostPort", "PortMap", "SwitchPorts"]


@dataclass(frozen=True, slots=True)
class SwitchPorts:
    """One switch: its datapath id and the port each of its links attaches to."""

    switch: str
    dpid: int
    link_ports: Mapping[str, int] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class HostPort:
    """A host: the switch and port it hangs off, its IPv4 address (and MAC, if known)."""

    host: str
    switch: str
    port: int
    ipv4: str
    mac: str | None = None

    def __post_init__(self) -> None:
        address = canonical_ipv4(self.ipv4, f"hosts.{self.host}.ipv4")
        if address is None or "/" in address:
            raise InputError(f"hosts.{self.host}.ipv4", f"must be one address: {self.ipv4!r}")
        object.__setattr__(self, "ipv4", address)
        object.__setattr__(self, "mac", canonical_mac(self.mac, f"hosts.{self.host}.mac"))


@dataclass(frozen=True, slots=True)
class PortMap:
    """Wiring of the data plane: which port each link end and each host uses.

    `switches` is keyed by topology node id, `hosts` by host name.
    """

    switches: Mapping[str, SwitchPorts] = field(hash=False)
    hosts: Mapping[str, HostPort] = field(hash=False)

    def switch(self, node: str) -> SwitchPorts:
        found = self.switches.get(node)
        if found is None:
            raise InputError("ports.switches", f"no port map for switch {node!r}")
        return found

    def link_port(self, node: str, link: str) -> int:
        """The port of `node` that link `link` attaches to."""
        port = self.switch(node).link_ports.get(link)
        if port is None:
            raise InputError(f"ports.switches.{node}", f"no port for link {link!r}")
        return port

    def host(self, name: str) -> HostPort:
        found = self.hosts.get(name)
        if found is None:
            raise InputError("ports.hosts", f"unknown host {name!r}")
        return found
