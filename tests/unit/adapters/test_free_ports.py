"""Ports for child processes: below the kernel's ephemeral range, and free when chosen."""

from __future__ import annotations

import socket

import pytest

from braid.adapters import free_ports as chooser
from braid.adapters.free_ports import free_port, free_ports


@pytest.mark.parametrize("kind", [socket.SOCK_STREAM, socket.SOCK_DGRAM])
def test_a_free_port_is_below_the_ephemeral_range_and_can_be_bound(
    kind: socket.SocketKind,
) -> None:
    low, _ = chooser._ephemeral_range()
    port = free_port(kind)
    assert 20_000 <= port < low
    with socket.socket(socket.AF_INET, kind) as child:
        child.bind(("127.0.0.1", port))


def test_a_port_in_use_is_never_handed_out() -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(30):
            listener = socket.socket()
            listener.bind(("127.0.0.1", free_port()))  # raises if it was in use
            listener.listen()
            held.append(listener)
    finally:
        for listener in held:
            listener.close()


def test_ports_asked_together_are_all_different() -> None:
    for _ in range(50):
        ports = free_ports(12)
        assert len(set(ports)) == 12
