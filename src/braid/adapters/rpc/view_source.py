"""Ask agents for their published views over gRPC (implements app's `ViewSource`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from braid.adapters.rpc.channels import TlsFiles, open_channel
from braid.adapters.rpc.published_views import part_from_pb
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.negotiation.defaults import CALL_TIMEOUT
from braid.app.negotiation.domain_graph import Published
from braid.core.errors import InputError

__all__ = ["GrpcViewSource"]


class GrpcViewSource:
    """One channel per agent address; every `fetch` asks them all at once."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = CALL_TIMEOUT,
        tls: TlsFiles | None = None,
        token: str | None = None,
    ) -> None:
        self.timeout = timeout
        # Own connections: asking a down agent must not put the negotiation's calls
        # to it into reconnect backoff once it is back. `token`: the peer token that
        # agents know this orchestrator by (a View needs a known peer too).
        self._channels = {
            a: open_channel(a, tls=tls, own=True, token=token) for a in dict.fromkeys(addresses)
        }
        self._stubs = {a: pb_grpc.DomainAgentStub(c) for a, c in self._channels.items()}

    def fetch(self) -> list[Published]:
        query = pb.ViewQuery()
        calls = [
            (address, stub.View.future(query, timeout=self.timeout))
            for address, stub in self._stubs.items()
        ]
        return [_answer(address, call) for address, call in calls]

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()


def _answer(address: str, call: Any) -> Published:
    try:
        reply = call.result()
    except grpc.RpcError as exc:
        return Published(address, None, f"{exc.code().name}: {exc.details()}")
    try:
        return Published(address, part_from_pb(reply))
    except InputError as exc:
        return Published(address, None, f"a bad view: {exc}")
