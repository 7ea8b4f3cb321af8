"""Rule plans (`SwitchPlan`) to and from protobuf: in results, and in a Commit to an agent."""

from __future__ import annotations

from collections.abc import Iterable

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.core.negotiation.result_rules import SwitchPlan, SwitchRule, Way

__all__ = ["plan_from_pb", "plan_to_pb"]


def plan_to_pb(plan: SwitchPlan) -> pb.SwitchPlan:
    return pb.SwitchPlan(
        domain=plan.domain,
        switch=plan.switch,
        dpid=plan.dpid,
        rules=[
            pb.SwitchRule(
                in_port=r.in_port,
                vlan=r.vlan,
                ways=[pb.RuleWay(port=w.port, vlan=w.vlan, weight=w.weight) for w in r.ways],
            )
            for r in plan.rules
        ],
    )


def plan_from_pb(message: pb.SwitchPlan) -> SwitchPlan:
    return SwitchPlan(
        message.domain,
        message.switch,
        message.dpid,
        tuple(
            SwitchRule(r.in_port, r.vlan, tuple(Way(w.port, w.vlan, w.weight) for w in r.ways))
            for r in message.rules
        ),
    )


def plans_from_pb(messages: Iterable[pb.SwitchPlan]) -> tuple[SwitchPlan, ...]:
    return tuple(plan_from_pb(m) for m in messages)
