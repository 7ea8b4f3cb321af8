"""Listening sockets, and the one line every braid server says when its port is taken.

`braid serve`, `agent`, `orchestrator`, `controller` and `monitor` each
listen somewhere; when another process already holds the address, they all
stop with the same one-line error: the address, and the option that picks
another port (`AddressInUseError.advice`), instead of a library's traceback.
"""

from __future__ import annotations

import errno
import socket

from braid.core.errors import BraidError

__all__ = ["AddressInUseError", "bind", "in_use", "listening_socket", "taken"]


def in_use(address: str, option: str) -> str:
    """The one line: which address is taken, and what to do about it."""
    return (
        f"cannot listen on {address}: the address is already in use (another process "
        f"listens there); pick a free port with {option}, or stop that process"
    )


class AddressInUseError(BraidError, RuntimeError):
    """`address` is held by another process (EADDRINUSE).

    A RuntimeError, as gRPC's own bind failure is, so that code that caught
    that one still catches this.
    """

    def __init__(self, address: str) -> None:
        super().__init__(f"Failed to bind to {address}: the address is already in use")
        self.address = address

    def advice(self, option: str) -> str:
        return in_use(self.address, option)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind(sock: socket.socket, host: str, port: int) -> None:
    """`sock.bind((host, port))`; a taken address raises `AddressInUseError`."""
    try:
        sock.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise AddressInUseError(_shown(host, port)) from exc
        raise


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to `host:port` and listening (SO_REUSEADDR, as servers set it)."""
    sock = socket.socket(_family(host), socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        bind(sock, host, port)
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


def taken(address: str, kind: socket.SocketKind = socket.SOCK_STREAM) -> bool:
    """Whether another process holds `HOST:PORT` (for `kind`) now; a port 0 never is."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    if not port.isdigit() or int(port) == 0:
        return False
    try:
        with socket.socket(_family(host), kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            bind(probe, host, int(port))
    except AddressInUseError:
        return True
    except OSError:
        return False  # not a local address, or not ours to bind: some other error
    return False
