"""One domain's share of a committed rule plan, as rules for its own switches (pure).

The orchestrator's rule plan (`result_rules`) numbers ports as the global
view does: an SDX's inter-domain links are its ports 1.. in link-id order;
a site's edge has port 1 towards the site (LAN) and port 2 towards its SDX
(WAN). A domain's agent knows how its switches are really cabled: it maps
each abstract port onto the link (or the LAN) it stands for, and that onto
the switch's real port, then rebuilds the rules — a plain rule per arriving
(port, VLAN), or a select group when the plan lists several ways out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.result_rules import LAN_PORT, WAN_PORT, SwitchPlan, Way
from braid.core.negotiation.sdx_plan import SDX_PRIORITY
from braid.core.rules.labels import reservation_cookie
from braid.core.rules.model import (
    BRAID_GROUP_IDS,
    Action,
    Bucket,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    Match,
    Output,
    PopVlan,
    PushVlan,
    RuleSet,
    SetVlan,
)

__all__ = ["LAN", "SwitchWiring", "abstract_ports", "domain_rule_set", "preferred_group_id"]

LAN = ""  # the abstract port of a site's edge that faces the site, not a link


@dataclass(frozen=True, slots=True)
class SwitchWiring:
    """A switch of this domain as it really is: its name, datapath id and ports."""

    switch: str
    dpid: int
    ports: Mapping[str, int]  # link id (or LAN) -> real port number


def abstract_ports(view: GlobalView, domain: str) -> dict[str, dict[int, str]]:
    """For each switch of `domain` a rule plan may name: abstract port -> link id (or LAN).

    An SDX meets its neighbours at one node, numbered over its inter-domain
    links sorted by id; a site's edge is the node at the site's end of an
    inter-domain link, with LAN and WAN ports.
    """
    links = sorted(view.links_of(domain), key=lambda link: link.id)
    ends = {link.id: (link.a if link.a_domain == domain else link.b) for link in links}
    if view.domains[domain].kind == "sdx":
        nodes = set(ends.values())
        return {node: {i: link.id for i, link in enumerate(links, start=1)} for node in nodes}
    if view.domains[domain].kind == "site":
        return {ends[link.id]: {LAN_PORT: LAN, WAN_PORT: link.id} for link in links}
    return {}


def domain_rule_set(
    plan: SwitchPlan,
    transaction: str,
    wiring: SwitchWiring,
    abstract: Mapping[int, str],
    group_ids: Sequence[int],
) -> RuleSet:
    """The switch's rules for `plan`, on its real ports; `group_ids` one per split rule."""
    cookie = reservation_cookie(transaction)
    flows: list[FlowRule] = []
    groups: list[Group] = []
    ids = iter(group_ids)
    for rule in plan.rules:
        in_port = _real(wiring, abstract, rule.in_port)
        match = Match(in_port=in_port, vlan_vid=rule.vlan or None)
        if len(rule.ways) == 1:
            actions = _actions(rule.vlan, rule.ways[0], wiring, abstract)
        else:
            group_id = next(ids, None)
            if group_id is None:
                raise InputError("group_ids", f"one group id per split rule of {plan.switch}")
            buckets = tuple(
                Bucket(_actions(rule.vlan, w, wiring, abstract), w.weight) for w in rule.ways
            )
            groups.append(Group(group_id, GroupKind.SELECT, buckets))
            actions = (GroupAction(group_id),)
        flows.append(FlowRule(SDX_PRIORITY, match, actions, cookie))
    return RuleSet.of(wiring.switch, wiring.dpid, flows, groups)


def splits(plan: SwitchPlan) -> int:
    """How many select groups `plan` needs."""
    return sum(1 for rule in plan.rules if len(rule.ways) > 1)


def preferred_group_id(transaction: str, switch: str, index: int) -> int:
    """A group id spread over braid's range by a hash, so that transactions rarely meet."""
    digest = hashlib.blake2b(f"{transaction}/{switch}/{index}".encode(), digest_size=4).digest()
    return BRAID_GROUP_IDS.start + int.from_bytes(digest, "big") % len(BRAID_GROUP_IDS)


def _actions(
    vlan_in: int, way: Way, wiring: SwitchWiring, abstract: Mapping[int, str]
) -> tuple[Action, ...]:
    out = Output(_real(wiring, abstract, way.port))
    if way.vlan == vlan_in:
        return (out,)
    if way.vlan == 0:
        return (PopVlan(), out)
    tag: Action = PushVlan(way.vlan) if vlan_in == 0 else SetVlan(way.vlan)
    return (tag, out)


def _real(wiring: SwitchWiring, abstract: Mapping[int, str], port: int) -> int:
    name = abstract.get(port)
    if name is None:
        raise InputError("switches", f"{wiring.switch}: the plan names port {port}, unknown here")
    real = wiring.ports.get(name)
    if real is None:
        what = "its LAN side" if name == LAN else f"link {name}"
        raise InputError("ports", f"the wiring of {wiring.switch} gives no port for {what}")
    return real
