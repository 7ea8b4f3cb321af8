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

from collections.abc import Sequence
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
from braid.core.rules.wiring import HostPort

__all__ = ["PINNED_PRIORITY", "pin_client_ports", "pin_flow", "pinned_path"]

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
    pin = _Pin(plan, request, ports, index)
    forward = pin.rule(0, flow.proto, flow.src_port, flow.dst_port)
    reverse = pin.rule(1, flow.proto, flow.dst_port, flow.src_port)
    return pin.rule_set(0, [forward]), pin.rule_set(1, [reverse])


def pin_client_ports(
    plan: RulePlan, request: RuleRequest, ports: PortMap, pinned: Sequence[tuple[int, int]]
) -> tuple[RuleSet, ...]:
    """Rules pinning TCP flows by their client port: `pinned` is (path index, client port).

    For traffic whose client ports are known in advance (iperf3 `--cport`),
    so that each path carries exactly the flows a run chose for it, whatever
    a switch's own hash would have done.
    """
    if not pinned:
        return ()
    forward: list[FlowRule] = []
    reverse: list[FlowRule] = []
    for index, client_port in pinned:
        if not 0 <= index < len(plan.vlans):
            raise InputError("pinned", f"path index {index} outside 0..{len(plan.vlans) - 1}")
        pin = _Pin(plan, request, ports, index)
        forward.append(pin.rule(0, TCP, client_port, None))
        reverse.append(pin.rule(1, TCP, None, client_port))
    first = _Pin(plan, request, ports, pinned[0][0])
    return first.rule_set(0, forward), first.rule_set(1, reverse)


TCP: Final = 6


class _Pin:
    """Entry rules at either end that send one transport flow over path `index`."""

    def __init__(self, plan: RulePlan, request: RuleRequest, ports: PortMap, index: int) -> None:
        self.plan, self.request, self.ports, self.index = plan, request, ports, index
        self.ends = (ports.host(request.src_host), ports.host(request.dst_host))

    def rule(self, direction: int, proto: int, tp_src: int | None, tp_dst: int | None) -> FlowRule:
        """The rule at the ingress of `direction` (0: src to dst, 1: the reply)."""
        here, there = self.ends if direction == 0 else self.ends[::-1]
        match = Match(
            in_port=here.port,
            eth_type=ETH_TYPE_IPV4,
            ipv4_src=here.ipv4,
            ipv4_dst=there.ipv4,
            ip_proto=proto,
            tp_src=tp_src,
            tp_dst=tp_dst,
        )
        return FlowRule(PINNED_PRIORITY, match, self._actions(direction, here), self.plan.cookie)

    def rule_set(self, direction: int, rules: Sequence[FlowRule]) -> RuleSet:
        switch = self.ends[direction].switch
        return RuleSet.of(switch, self.ports.switch(switch).dpid, rules)

    def _actions(self, direction: int, here: HostPort) -> tuple[Action, ...]:
        if self.request.standby is not None:
            per_direction = len(self.plan.group_ids) // 2
            return (GroupAction(self.plan.group_ids[direction * per_direction + 1 + self.index]),)
        path = self.request.allocations[self.index].path
        link = path.links[0] if direction == 0 else path.links[-1]
        return (
            PushVlan(self.plan.vlans[self.index]),
            Output(self.ports.link_port(here.switch, link)),
        )
