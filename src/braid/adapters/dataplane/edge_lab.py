"""Two multipath edges back to back over two VLAN paths of different delay.

    host a ─ veth ─ edge A ─ veth ─ wa ═ link, VLAN 101 (fast) ═ wb ─ veth ─ edge B ─ veth ─ host b
                                       ═ link, VLAN 102 (slow) ═

Namespaces `{tag}A` (host a), `{tag}M` (both edges, the wire's ends and
the two link emulators, one per VLAN on the same two interfaces: the
kernels here have no 8021q module for VLAN interfaces) and `{tag}B`. The
hosts know each other's MAC address (static neighbours): only the
reservation's tagged frames cross. Every name starts with `bdq` and a
per-lab tag. Used by the integration test and the benchmark; needs root.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from dataclasses import dataclass
from types import TracebackType
from typing import Final

__all__ = ["EDGE_HOST_A_IP", "EDGE_HOST_B_IP", "EdgeLab"]

EDGE_HOST_A_IP: Final = "10.88.0.1"
EDGE_HOST_B_IP: Final = "10.88.0.2"
VLANS: Final = (101, 102)
_LAB_NUMBERS: Final = itertools.count()
# Host MTU under the wire's: the 4-byte tag fits.
_HOST_MTU: Final = 1400


def _run(command: str, *, check: bool = True) -> str:
    """Runs a command line (lab names never hold spaces)."""
    done = subprocess.run(command.split(), check=check, capture_output=True, text=True)
    return done.stdout


@dataclass
class EdgeLab:
    tag: str

    @classmethod
    def fresh(cls) -> EdgeLab:
        # bdq + at most 6 characters + a 3-character suffix: under IFNAMSIZ (15).
        number = next(_LAB_NUMBERS) % 10
        return cls(tag=f"bdq{os.getpid() % 100_000}{number}")

    @property
    def host_a(self) -> str:
        return f"{self.tag}A"

    @property
    def middle(self) -> str:
        return f"{self.tag}M"

    @property
    def host_b(self) -> str:
        return f"{self.tag}B"

    def interface(self, name: str) -> str:
        """a0 (host a), a1 and ea (edge A: host and net side), wa (the wire's end);
        the same with b for the other side."""
        return f"{self.tag}{name}"

    def create(self) -> None:
        self.destroy()
        try:
            for namespace in (self.host_a, self.middle, self.host_b):
                _run(f"ip netns add {namespace}")
            for side, host, ip in (
                ("a", self.host_a, EDGE_HOST_A_IP),
                ("b", self.host_b, EDGE_HOST_B_IP),
            ):
                outer, inner = self.interface(f"{side}0"), self.interface(f"{side}1")
                _run(f"ip link add {outer} netns {host} type veth peer {inner} netns {self.middle}")
                self._prepare(host, outer, _HOST_MTU)
                self._prepare(self.middle, inner, 1500)
                _run(f"ip -n {host} addr add {ip}/24 dev {outer}")
                edge, wire = self.interface(f"e{side}"), self.interface(f"w{side}")
                _run(f"ip -n {self.middle} link add {edge} type veth peer {wire}")
                self._prepare(self.middle, edge, 1500)
                self._prepare(self.middle, wire, 1500)
            self._static_neighbours()
        except BaseException:
            self.destroy()
            raise

    def _prepare(self, namespace: str, interface: str, mtu: int) -> None:
        _run(f"ip -n {namespace} link set {interface} mtu {mtu} up")
        # Frames forwarded by raw sockets must be complete: no checksum or segmentation offload.
        offloads = "tx off tso off gso off gro off"
        _run(f"ip netns exec {namespace} ethtool -K {interface} {offloads}", check=False)

    def _mac(self, namespace: str, interface: str) -> str:
        return _run(f"ip netns exec {namespace} cat /sys/class/net/{interface}/address").strip()

    def _static_neighbours(self) -> None:
        """Each host knows the other's MAC: ARP would need an untagged path."""
        ends = (
            (self.host_a, self.interface("a0"), EDGE_HOST_B_IP, self.host_b, self.interface("b0")),
            (self.host_b, self.interface("b0"), EDGE_HOST_A_IP, self.host_a, self.interface("a0")),
        )
        for namespace, interface, peer_ip, peer_namespace, peer_interface in ends:
            mac = self._mac(peer_namespace, peer_interface)
            neigh = f"neigh replace {peer_ip} lladdr {mac} dev {interface} nud permanent"
            _run(f"ip -n {namespace} {neigh}")

    def exec_argv(self, namespace: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", namespace, *argv]

    def destroy(self) -> None:
        """Deletes the namespaces (their interfaces go with them)."""
        for namespace in (self.host_a, self.middle, self.host_b):
            _run(f"ip netns del {namespace}", check=False)

    def __enter__(self) -> EdgeLab:
        self.create()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.destroy()
