"""BFD on Open vSwitch interfaces, and a transparent middle that carries it end to end.

Open vSwitch runs BFD (RFC 5880, asynchronous mode) in ofproto for any
datapath, the userspace one included: `ovs-vsctl set interface IF
bfd:enable=true bfd:min_tx=MS bfd:min_rx=MS`. While the session is down the
interface is not *live*, and a fast-failover group's bucket that watches
its port is skipped: a border switch with BFD on its long-haul interfaces
falls over by itself when frames stop crossing the long haul, although its
own port stays up. The far end declares the session down after
`decay` × the negotiated interval without a control packet (3 × by default).

Both ends of a session must run BFD. In the emulation a long haul is two
topology links through a middle switch (A–P–B); the middle forwards BFD's
control packets (IPv4 UDP to port 3784, untagged, so braid's VLAN rules
never match them) from one long-haul port to the other, like the circuit
it stands for, and the two border switches hold one session across it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError

__all__ = ["BFD_PORT", "BfdSettings", "bfd_forwarding", "relay_bfd", "set_bfd"]

BFD_PORT: Final = 3784  # single-hop BFD control packets (RFC 5881)
MIN_INTERVAL_MS: Final = 1
MAX_INTERVAL_MS: Final = 60_000
RELAY_PRIORITY: Final = 60_000  # above braid's rules; they never match untagged UDP anyway
RELAY_COOKIE: Final = "0xbfd0000000000000"  # not braid's cookie: reconciliation leaves it alone


@dataclass(frozen=True, slots=True)
class BfdSettings:
    """Transmit and receive intervals in milliseconds (OVS's `bfd:min_tx`, `bfd:min_rx`)."""

    min_tx_ms: int = 50
    min_rx_ms: int = 50

    def __post_init__(self) -> None:
        for name in ("min_tx_ms", "min_rx_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(name, f"{value!r} is not a whole number of milliseconds")
            if not MIN_INTERVAL_MS <= value <= MAX_INTERVAL_MS:
                raise InputError(
                    name, f"{value} ms is out of range ({MIN_INTERVAL_MS} to {MAX_INTERVAL_MS})"
                )

    def columns(self) -> list[str]:
        return [
            "bfd:enable=true",
            f"bfd:min_tx={self.min_tx_ms}",
            f"bfd:min_rx={self.min_rx_ms}",
        ]


def _run(argv: Sequence[str]) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


def set_bfd(interfaces: Sequence[str], settings: BfdSettings | None) -> None:
    """BFD on (with `settings`) or off (None) on each interface, in one transaction."""
    argv = ["ovs-vsctl"]
    for interface in interfaces:
        if settings is None:
            argv += ["--", "clear", "Interface", interface, "bfd"]
        else:
            argv += ["--", "set", "Interface", interface, *settings.columns()]
    if len(argv) > 1:
        _run(argv)


def bfd_forwarding(interface: str) -> bool | None:
    """Whether BFD on `interface` says the path forwards (None: BFD is not running there)."""
    done = subprocess.run(
        ["ovs-vsctl", "get", "Interface", interface, "bfd_status:forwarding"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    if done.returncode != 0:
        return None
    return done.stdout.strip().strip('"') == "true"


def relay_bfd(bridge: str, ports: tuple[int, int]) -> None:
    """On a middle switch: BFD's control packets cross from each port to the other."""
    first, second = ports
    for here, there in ((first, second), (second, first)):
        flow = (
            f"cookie={RELAY_COOKIE},priority={RELAY_PRIORITY},in_port={here},"
            f"udp,tp_dst={BFD_PORT},actions=output:{there}"
        )
        _run(["ovs-ofctl", "-O", "OpenFlow13", "add-flow", bridge, flow])
