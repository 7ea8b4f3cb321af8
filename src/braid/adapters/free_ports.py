"""Free loopback ports for processes that are about to be started.

The ports are chosen below the kernel's ephemeral range: a port taken with
`bind(0)` and closed again is one the kernel hands out next as the source port
of some outgoing connection (or to another `bind(0)`), so on a busy host
another process could hold it by the time the child binds it. Below that range
only an explicit bind takes a port, and the ones chosen here were free when asked.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 20_000  # below: ports of well-known services (PostgreSQL, OpenFlow, web servers)
_TRIES = 200

__all__ = ["free_port", "free_ports"]


def free_port(kind: socket.SocketKind = socket.SOCK_STREAM, host: str = "127.0.0.1") -> int:
    """A port on `host` that nothing was bound to just now (for `kind`: TCP or UDP)."""
    return free_ports(1, kind, host)[0]


def free_ports(
    count: int, kind: socket.SocketKind = socket.SOCK_STREAM, host: str = "127.0.0.1"
) -> list[int]:
    """`count` different such ports (each held while the others are chosen)."""
    low, _ = _ephemeral_range()
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            probe = held.enter_context(socket.socket(socket.AF_INET, kind))
            _bind_below(probe, host, low)
            ports.append(int(probe.getsockname()[1]))
        return ports


def _bind_below(probe: socket.socket, host: str, low: int) -> None:
    """Bind `probe` to a free port below `low` (where the ephemeral range begins)."""
    if low - _LOWEST >= 1_000:
        pick = random.SystemRandom()
        for _ in range(_TRIES):
            try:
                probe.bind((host, pick.randrange(_LOWEST, low)))
            except OSError:
                continue
            return
    probe.bind((host, 0))  # no room below the ephemeral range: the kernel's pick


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(v) for v in _EPHEMERAL.read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return (32_768, 60_999)  # Linux's default
    return (low, high)
