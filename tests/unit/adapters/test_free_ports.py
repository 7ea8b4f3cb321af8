"""Ports for child processes: below the kernel's ephemeral range, and free when chosen."""

from __future__ import annotations

import socket

import pytest

from braid.adapters import free_ports
from braid.adapters.free_ports import free_port


@pytest.mark.parametrize("kind", [socket.SOCK_STREAM, socket.SOCK_DGRAM])
def test_a_free_port_is_below_the_ephemeral_range_and_can_be_bound(
    kind: socket.SocketKind,
) -> None:
    low, _ = free_ports._ephemeral_range()
    port = free_port(kind)
    assert 20_000 <= port < low
    with socket.socket(socket.AF_INET, kind) as child:
        child.bind(("127.0.0.1", port))


def test_a_port_in_use_is_not_handed_out() -> None:
    held = []
    try:
        for _ in range(20):
            port = free_port()
            listener = socket.socket()
            listener.bind(("127.0.0.1", port))
            listener.listen()
            held.append(listener)
        ports = [s.getsockname()[1] for s in held]
        assert len(set(ports)) == len(ports)
        assert not free_ports._bindable(ports[0], socket.SOCK_STREAM, "127.0.0.1")
    finally:
        for listener in held:
            listener.close()
