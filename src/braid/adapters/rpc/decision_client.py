"""A domain agent's questions to its coordinators: `Orchestrator.Decide` over gRPC.

Implements `braid.app.agent.ports.DecisionSource`. One channel per
coordinator address, opened on first use; a coordinator that is down or slow
is "no answer" (None), and the agent asks again later.
"""

from __future__ import annotations

import threading
from typing import Any

import grpc

from braid.adapters.rpc.channels import TlsFiles, open_channel
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc

_ANSWER = {
    pb.OUTCOME_COMMIT: "commit",
    pb.OUTCOME_ABORT: "abort",
    pb.OUTCOME_PENDING: "pending",
}


class GrpcDecisionSource:
    def __init__(self, *, tls: TlsFiles | None = None, timeout: float = 2.0) -> None:
        self._tls = tls
        self._timeout = timeout
        self._stubs: dict[str, Any] = {}
        self._channels: list[Any] = []
        self._lock = threading.Lock()

    def decision(self, coordinator: str, transaction: str, token: str, domain: str) -> str | None:
        query = pb.DecisionQuery(transaction_id=transaction, token=token, domain=domain)
        try:
            reply = self._stub(coordinator).Decide(query, timeout=self._timeout)
        except grpc.RpcError:
            return None
        return _ANSWER.get(reply.outcome)

    def _stub(self, coordinator: str) -> Any:
        with self._lock:
            stub = self._stubs.get(coordinator)
            if stub is None:
                channel = open_channel(coordinator, tls=self._tls)
                self._channels.append(channel)
                stub = self._stubs[coordinator] = pb_grpc.OrchestratorStub(channel)
            return stub

    def close(self) -> None:
        with self._lock:
            for channel in self._channels:
                channel.close()
            self._channels.clear()
            self._stubs.clear()
