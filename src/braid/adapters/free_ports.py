"""A free loopback port for a process that is about to be started.

The port is chosen below the kernel's ephemeral range: a port taken with
`bind(0)` and closed again is one the kernel hands out next as the source port
of some outgoing connection (or to another `bind(0)`), so on a busy host
another process could hold it by the time the child binds it. Below that range
only an explicit bind takes a port, and the one chosen here was free when asked.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 20_000  # below: ports of well-known services (PostgreSQL, OpenFlow, web servers)
_TRIES = 200

__all__ = ["free_port"]


def free_port(kind: socket.SocketKind = socket.SOCK_STREAM, host: str = "127.0.0.1") -> int:
    """A port on `host` that nothing was bound to just now (for `kind`: TCP or UDP)."""
    low, _ = _ephemeral_range()
    if low - _LOWEST >= 1_000:
        pick = random.SystemRandom()
        for _ in range(_TRIES):
            port = pick.randrange(_LOWEST, low)
            if _bindable(port, kind, host):
                return port
    return _any_port(kind, host)  # no room below the ephemeral range: the kernel's pick


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(v) for v in _EPHEMERAL.read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return (32_768, 60_999)  # Linux's default
    return (low, high)


def _bindable(port: int, kind: socket.SocketKind, host: str) -> bool:
    with socket.socket(socket.AF_INET, kind) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _any_port(kind: socket.SocketKind, host: str) -> int:
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
