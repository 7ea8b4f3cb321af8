"""A three-namespace lab: host a ─ veth ─ [link namespace] ─ veth ─ host b.

The link namespace holds the two inner ends, where `braid-dp link` (or a
bridge, for a baseline) joins them. Every name starts with `bdp` and a
per-lab tag, so labs of concurrent runs (and Mininet's names) never collide.
Used by the integration tests and bench/linkemu_bench.py; needs root.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from dataclasses import dataclass
from types import TracebackType
from typing import Final

__all__ = ["VethLab"]

HOST_A_IP: Final = "10.77.0.1"
HOST_B_IP: Final = "10.77.0.2"
_LAB_NUMBERS: Final = itertools.count()


def _run(command: str, *, check: bool = True) -> None:
    """Runs a command line (lab names never hold spaces)."""
    subprocess.run(command.split(), check=check, capture_output=True, text=True)


@dataclass
class VethLab:
    """Namespaces `{tag}A`, `{tag}L` (the link), `{tag}B` and their veths."""

    tag: str
    mtu: int = 1500

    @classmethod
    def fresh(cls, mtu: int = 1500) -> VethLab:
        # At most 11 characters + a 2-character suffix: under IFNAMSIZ (15).
        number = next(_LAB_NUMBERS) % 100
        return cls(tag=f"bdp{os.getpid() % 100_000}n{number}", mtu=mtu)

    @property
    def namespaces(self) -> tuple[str, str, str]:
        return (f"{self.tag}A", f"{self.tag}L", f"{self.tag}B")

    @property
    def host_a(self) -> str:
        return self.namespaces[0]

    @property
    def link(self) -> str:
        return self.namespaces[1]

    @property
    def host_b(self) -> str:
        return self.namespaces[2]

    def interface(self, name: str) -> str:
        """a0 (in host a), a1 and b1 (in the link namespace), b0 (in host b)."""
        return f"{self.tag}{name}"

    def create(self) -> None:
        self.destroy()
        try:
            for namespace in self.namespaces:
                _run(f"ip netns add {namespace}")
            for side, host in (("a", self.host_a), ("b", self.host_b)):
                outer, inner = self.interface(f"{side}0"), self.interface(f"{side}1")
                _run(f"ip link add {outer} netns {host} type veth peer {inner} netns {self.link}")
                self._prepare(host, outer)
                self._prepare(self.link, inner)
            _run(f"ip -n {self.host_a} addr add {HOST_A_IP}/24 dev {self.interface('a0')}")
            _run(f"ip -n {self.host_b} addr add {HOST_B_IP}/24 dev {self.interface('b0')}")
        except BaseException:
            self.destroy()
            raise

    def _prepare(self, namespace: str, interface: str) -> None:
        _run(f"ip -n {namespace} link set {interface} mtu {self.mtu} up")
        # Checksum and segmentation offload off: frames forwarded by a raw
        # socket must be complete, or TCP stalls on bad checksums and oversize frames.
        offloads = "tx off tso off gso off gro off"
        _run(f"ip netns exec {namespace} ethtool -K {interface} {offloads}", check=False)

    def bridge(self) -> None:
        """Joins the inner ends with a Linux bridge (the baseline forward)."""
        bridge = self.interface("br")
        _run(f"ip -n {self.link} link add {bridge} type bridge")
        for inner in (self.interface("a1"), self.interface("b1")):
            _run(f"ip -n {self.link} link set {inner} master {bridge}")
        _run(f"ip -n {self.link} link set {bridge} up")

    def unbridge(self) -> None:
        _run(f"ip -n {self.link} link del {self.interface('br')}", check=False)

    def exec_argv(self, namespace: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", namespace, *argv]

    def rx_packets(self, namespace: str, interface: str) -> int:
        """The interface's received-frames counter (counted even if no one reads them)."""
        out = subprocess.run(
            self.exec_argv(namespace, ["cat", f"/sys/class/net/{interface}/statistics/rx_packets"]),
            check=True,
            capture_output=True,
            text=True,
        )
        return int(out.stdout.strip())

    def mac(self, namespace: str, interface: str) -> str:
        out = subprocess.run(
            self.exec_argv(namespace, ["cat", f"/sys/class/net/{interface}/address"]),
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    def destroy(self) -> None:
        """Deletes the namespaces (their veths go with them); nothing left if never made."""
        for namespace in self.namespaces:
            _run(f"ip netns del {namespace}", check=False)

    def __enter__(self) -> VethLab:
        self.create()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.destroy()
