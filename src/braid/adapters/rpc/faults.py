"""Fault injection for the fault tests and demonstrations (off unless asked for).

`BRAID_FAULT_AGENT` in an agent's environment:
  exit-on-commit      the process dies (exit 70) on the first Commit, before applying it
                      (a batch with a Commit in it dies before applying any of its messages)
  slow-prep=SECONDS   every Prepare (every batch with a Prep in it) waits SECONDS first
  exit-before-write   the process dies (exit 70) after handling a message or batch in
                      memory, just before writing its changes to the store
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from braid.adapters.rpc.agent_servicer import AgentServicer
from braid.adapters.rpc.v1 import negotiation_pb2 as pb

FAULT_VARIABLE = "BRAID_FAULT_AGENT"
EXIT_CODE = 70


class FaultyAgentServicer(AgentServicer):
    def __init__(self, service: Any, fault: str) -> None:
        super().__init__(service)
        self.exit_on_commit = fault == "exit-on-commit"
        self.prep_delay = float(fault.split("=", 1)[1]) if fault.startswith("slow-prep=") else 0.0
        if fault == "exit-before-write":
            service.store.write = _exit_now
        elif not self.exit_on_commit and not fault.startswith("slow-prep="):
            raise ValueError(f"{FAULT_VARIABLE}: unknown fault {fault!r}")

    async def Prepare(self, request: pb.ReservationPrep, context: Any) -> pb.PrepVote:  # noqa: N802
        await asyncio.sleep(self.prep_delay)  # only this call waits: the agent goes on
        return await super().Prepare(request, context)

    async def CommitHold(self, request: pb.Commit, context: Any) -> pb.Ack:  # noqa: N802
        if self.exit_on_commit:
            os._exit(EXIT_CODE)
        return await super().CommitHold(request, context)

    async def exchange_one(self, request: pb.AgentBatch, context: Any) -> pb.AgentBatchReply:
        kinds = {item.WhichOneof("message") for item in request.items}
        if "prep" in kinds:
            await asyncio.sleep(self.prep_delay)
        if self.exit_on_commit and "commit" in kinds:
            os._exit(EXIT_CODE)
        return await super().exchange_one(request, context)


def _exit_now(*args: Any) -> None:
    os._exit(EXIT_CODE)


def servicer_for(service: Any) -> AgentServicer:
    fault = os.environ.get(FAULT_VARIABLE, "")
    return FaultyAgentServicer(service, fault) if fault else AgentServicer(service)
