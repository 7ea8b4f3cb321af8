"""Per-flow VLAN choice: exact-match rules that pin one transport flow to one path.

Seed 000's SDX tags each new TCP flow with a VLAN from the reservation's pool
and warns that the two ends must agree, or a flow's ACKs return over another
tunnel. Here both ends choose with the symmetric weighted 5-tuple hash
(`flow_hash.choose`, weighted by the paths' shares), so they agree without
talking. A controller that sees a new flow (or an SDX edge element) installs
`pin_flow`'s rules above the reservation's entry rules; they pick the same
path the fake switch's select group would, made explicit for switches whose
own hash is different. Their cookie is the reservation's, so they go when
the reservation goes (delete them with the plan's other rules).
"""

from __future__ import annotations

from typing import Final

from braid.core.errors import InputError
from braid.core.rules import flow_hash
from braid.core.rules.compiler import ENTRY_PRIORITY, bucket_weights
from braid.core.rules.model import (
    ETH_TYPE_IPV4,
    Action,
    FlowRule,
    GroupAction,
    Match,
    Output,
    PortMap,
    PushVlan,
    RulePlan,
    RuleRequest,
    RuleSet,
)

__all__ = ["PINNED_PRIORITY", "pin_flow", "pinned_path"]

PINNED_PRIORITY: Final = ENTRY_PRIORITY + 100


def pinned_path(request: RuleRequest, flow: flow_hash.FiveTuple) -> int:
    """Index of the allocation that `flow` (either direction) is pinned to."""
    weights = bucket_weights([a.bandwidth for a in request.allocations])
    return flow_hash.choose(flow, weights)


def pin_flow(
    plan: RulePlan, request: RuleRequest, ports: PortMap, flow: flow_hash.FiveTuple
) -> tuple[RuleSet, RuleSet]:
    """Rules at the two ingress switches sending `flow` and its reply over one path.

    `flow` runs from `request.src_host` to `request.dst_host` (TCP or UDP);
    with a standby path the rules go through the path's fast-failover group.
    """
    src, dst = ports.host(request.src_host), ports.host(request.dst_host)
    if (flow.src_ip, flow.dst_ip) != (src.ipv4, dst.ipv4):
        raise InputError("flow", f"runs {flow.src_ip}->{flow.dst_ip}, not {src.ipv4}->{dst.ipv4}")
    if flow.proto not in (6, 17):
        raise InputError("flow.proto", "only TCP (6) and UDP (17) flows can be pinned")
    index = pinned_path(request, flow)
    path = request.allocations[index].path
    per_direction = len(plan.group_ids) // 2
    rule_sets = []
    for direction, (here, there, pinned, link) in enumerate(
        ((src, dst, flow, path.links[0]), (dst, src, flow.reversed(), path.links[-1]))
    ):
        actions: tuple[Action, ...]
        if request.standby is not None:
            actions = (GroupAction(plan.group_ids[direction * per_direction + 1 + index]),)
        else:
            actions = (PushVlan(plan.vlans[index]), Output(ports.link_port(here.switch, link)))
        match = Match(
            in_port=here.port,
            eth_type=ETH_TYPE_IPV4,
            ipv4_src=here.ipv4,
            ipv4_dst=there.ipv4,
            ip_proto=pinned.proto,
            tp_src=pinned.src_port,
            tp_dst=pinned.dst_port,
        )
        rule = FlowRule(PINNED_PRIORITY, match, actions, plan.cookie)
        rule_sets.append(RuleSet.of(here.switch, ports.switch(here.switch).dpid, [rule]))
    return rule_sets[0], rule_sets[1]
