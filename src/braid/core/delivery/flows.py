"""Which flows of a compiled reservation count what, per direction.

The compiler (`braid.core.rules.compiler`) gives each direction of a
reservation exactly one IPv4 entry rule at the sender's switch (matching the
sender's port and the two addresses) and, at the receiver's switch, one
label rule per path (and standby) that pops the VLAN and outputs to the
receiver's port. So, per direction:

- *offered*: the entry IPv4 rule's counters. A switch counts a packet
  against the rule it matched before the rule's meter acts, so this is what
  the sender sent, dropped packets included;
- *delivered*: the sum over the egress label rules (whichever path a flow
  was hashed onto, and the standby after a fail-over);
- *dropped by policing*: the band counters of the entry rule's meter (hard
  policing only; without a meter nothing is dropped on purpose).

The flows are found by what they do (their match and actions against the two
`HostPort`s), not by priority: a rule at the entry priority that matches ARP
is not an IPv4 entry rule. ARP between the two hosts rides the first path
and so reaches the egress rule too; a few dozen bytes a minute, left in.
"""

from __future__ import annotations

from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.rules.model import (
    ETH_TYPE_IPV4,
    FlowRule,
    HostPort,
    Match,
    Output,
    PopVlan,
    RulePlan,
    RuleSet,
)

__all__ = ["CountedDirection", "FlowRef", "counted_flows"]


@dataclass(frozen=True, slots=True)
class FlowRef:
    """One flow table entry of one switch, by its key (table, priority, match)."""

    switch: str
    table_id: int
    priority: int
    match: Match

    @staticmethod
    def of(switch: str, flow: FlowRule) -> FlowRef:
        return FlowRef(switch, flow.table_id, flow.priority, flow.match)


@dataclass(frozen=True, slots=True)
class CountedDirection:
    """The flows that count one direction's traffic, from host `sender` to host `receiver`."""

    sender: str
    receiver: str
    entry: FlowRef
    egress: tuple[FlowRef, ...]
    meter: tuple[str, int] | None  # (switch, meter id) of the entry rule's meter

    @property
    def flows(self) -> tuple[FlowRef, ...]:
        return (self.entry, *self.egress)


def counted_flows(
    plan: RulePlan, src: HostPort, dst: HostPort
) -> tuple[CountedDirection, CountedDirection]:
    """The counting flows of `plan`: src -> dst first, then dst -> src.

    Raises InputError when the plan lacks a direction's entry or egress rule
    (then it was not compiled for these two hosts).
    """
    return _direction(plan, src, dst), _direction(plan, dst, src)


def _direction(plan: RulePlan, here: HostPort, there: HostPort) -> CountedDirection:
    wanted = Match(
        in_port=here.port, eth_type=ETH_TYPE_IPV4, ipv4_src=here.ipv4, ipv4_dst=there.ipv4
    )
    entries = [f for f in _flows(plan.entry, here.switch) if f.match == wanted]
    if not entries:
        raise InputError(
            "plan.entry", f"{plan.reservation_id}: no IPv4 entry rule {here.host} -> {there.host}"
        )
    entry = entries[0]
    delivering = (PopVlan(), Output(there.port))
    egress = [
        FlowRef.of(there.switch, f)
        for f in _flows(plan.forwarding, there.switch)
        if f.actions == delivering and f.match.vlan_vid is not None
    ]
    if not egress:
        raise InputError(
            "plan.forwarding", f"{plan.reservation_id}: no egress rule delivering to {there.host}"
        )
    meter = None if entry.meter_id is None else (here.switch, entry.meter_id)
    return CountedDirection(
        here.host, there.host, FlowRef.of(here.switch, entry), tuple(egress), meter
    )


def _flows(rule_sets: tuple[RuleSet, ...], switch: str) -> list[FlowRule]:
    return [f for rs in rule_sets if rs.switch == switch for f in rs.flows]
