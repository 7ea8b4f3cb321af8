"""Fault injection for the fault tests and demonstrations (off unless asked for).

`BRAID_FAULT_AGENT` in an agent's environment:
  exit-on-commit      the process dies (exit 70) on the first Commit, before applying it
  slow-prep=SECONDS   every Prepare waits SECONDS before it is handled
"""

from __future__ import annotations

import os
import time
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
        if not self.exit_on_commit and not fault.startswith("slow-prep="):
            raise ValueError(f"{FAULT_VARIABLE}: unknown fault {fault!r}")

    def Prepare(self, request: pb.ReservationPrep, context: Any) -> pb.PrepVote:  # noqa: N802
        time.sleep(self.prep_delay)
        return super().Prepare(request, context)

    def CommitHold(self, request: pb.Commit, context: Any) -> pb.Ack:  # noqa: N802
        if self.exit_on_commit:
            os._exit(EXIT_CODE)
        return super().CommitHold(request, context)


def servicer_for(service: Any) -> AgentServicer:
    fault = os.environ.get(FAULT_VARIABLE, "")
    return FaultyAgentServicer(service, fault) if fault else AgentServicer(service)
