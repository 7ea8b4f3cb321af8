"""A gRPC server never shares its port: a second one on a taken port is refused."""

from __future__ import annotations

import pytest

from braid.adapters.rpc.channels import start_server


def test_a_taken_port_is_refused_not_shared() -> None:
    first, port = start_server([], "127.0.0.1:0")
    try:
        with pytest.raises(RuntimeError, match="Failed to bind"):
            start_server([], f"127.0.0.1:{port}")
    finally:
        first.stop(None)
