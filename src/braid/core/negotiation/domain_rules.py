"""One domain's share of a committed rule plan, as rules for its own switches (pure).

The orchestrator's rule plan (`result_rules`) numbers ports as the global
view does: an SDX's inter-domain links are its ports 1.. in link-id order;
a site's edge has port 1 towards the site (LAN) and port 2 towards its SDX
(WAN). A domain's agent knows how its switches are really cabled: it maps
each abstract port onto the link (or the LAN) it stands for, and that onto
the switch's real port, then rebuilds the rules — a plain rule per arriving
(port, VLAN), or a select group when the plan lists several ways out.

When the plan says how to police and the domain knows its links'
capacities, the rates are held too, as a single domain holds them
(`braid.core.rules.enforcement`): every way with a rate leaves in a queue
of its own on its port (queue id = the VLAN it leaves with), and for `hard`
each rule taking a site's traffic in from its LAN meters it at the sum of
its ways' rates. Meter ids come from the same allocation as group ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from braid.core.errors import InputError
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.result_rules import (
    LAN_PORT,
    SwitchPlan,
    SwitchRule,
    Way,
    site_wan_ports,
)
from braid.core.negotiation.sdx_plan import SDX_PRIORITY
from braid.core.rules.compiler import meter_id_of
from braid.core.rules.enforcement import METER_BURST_SECONDS, Meter, Policing, Queue, meter_kbps
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
    SetQueue,
    SetVlan,
)

__all__ = [
    "LAN",
    "SwitchWiring",
    "abstract_ports",
    "domain_rule_set",
    "preferred_group_id",
    "splits",
]

LAN = ""  # the abstract port of a site's edge that faces the site, not a link


@dataclass(frozen=True, slots=True)
class SwitchWiring:
    """A switch of this domain as it really is: its name, datapath id and ports."""

    switch: str
    dpid: int
    ports: Mapping[str, int]  # link id (or LAN) -> real port number
    capacities: Mapping[str, int] = field(default_factory=dict)  # link id -> bit/s


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
        return {
            node: {LAN_PORT: LAN}
            | {port: link for link, port in site_wan_ports(view, domain, node).items()}
            for node in set(ends.values())
        }
    return {}


def domain_rule_set(
    plan: SwitchPlan,
    transaction: str,
    wiring: SwitchWiring,
    abstract: Mapping[int, str],
    group_ids: Sequence[int],
) -> RuleSet:
    """The switch's rules for `plan`, on its real ports; `group_ids` as many as `splits`
    says (one per split rule, then one per metered entry rule)."""
    cookie = reservation_cookie(transaction)
    flows: list[FlowRule] = []
    groups: list[Group] = []
    queues: list[Queue] = []
    meters: list[Meter] = []
    ids = iter(group_ids)

    def next_id() -> int:
        found = next(ids, None)
        if found is None:
            raise InputError("group_ids", f"fewer group ids than {plan.switch}'s rules need")
        return found

    def way_actions(vlan_in: int, way: Way) -> tuple[Action, ...]:
        actions = _actions(vlan_in, way, wiring, abstract)
        queue = _queue(plan, way, wiring, abstract)
        if queue is None:
            return actions
        if queue not in queues:
            queues.append(queue)
        return (*actions[:-1], SetQueue(queue.queue_id), actions[-1])

    entries = []
    for rule in plan.rules:
        in_port = _real(wiring, abstract, rule.in_port)
        match = Match(in_port=in_port, vlan_vid=rule.vlan or None)
        if len(rule.ways) == 1:
            actions = way_actions(rule.vlan, rule.ways[0])
        else:
            group_id = next_id()
            buckets = tuple(Bucket(way_actions(rule.vlan, w), w.weight) for w in rule.ways)
            groups.append(Group(group_id, GroupKind.SELECT, buckets))
            actions = (GroupAction(group_id),)
        entries.append((rule, match, actions))
    for rule, match, actions in entries:
        meter = _meter(rule, next_id()) if _metered(plan, rule, abstract) else None
        if meter is not None:
            meters.append(meter)
        meter_id = None if meter is None else meter.meter_id
        flows.append(FlowRule(SDX_PRIORITY, match, actions, cookie, meter_id=meter_id))
    return RuleSet.of(wiring.switch, wiring.dpid, flows, groups, meters, queues)


def splits(plan: SwitchPlan, abstract: Mapping[int, str] | None = None) -> int:
    """How many group ids `plan` needs: one per select group, one per metered entry rule
    (those need `abstract`, the switch's port names, to be found)."""
    groups = sum(1 for rule in plan.rules if len(rule.ways) > 1)
    if abstract is None:
        return groups
    return groups + sum(1 for rule in plan.rules if _metered(plan, rule, abstract))


def _metered(plan: SwitchPlan, rule: SwitchRule, abstract: Mapping[int, str]) -> bool:
    """Whether `rule` takes a site's traffic in from its LAN under hard policing."""
    if plan.policing is not Policing.HARD or abstract.get(rule.in_port) != LAN:
        return False
    return sum(w.rate for w in rule.ways) > 0


def _meter(rule: SwitchRule, group_id: int) -> Meter:
    rate = meter_kbps(sum(w.rate for w in rule.ways))
    return Meter(meter_id_of(group_id), rate, max(1, int(rate * METER_BURST_SECONDS)))


def _queue(
    plan: SwitchPlan, way: Way, wiring: SwitchWiring, abstract: Mapping[int, str]
) -> Queue | None:
    """The queue `way` leaves in, if the plan polices and the way's link has a capacity."""
    link = abstract.get(way.port, LAN)
    line = wiring.capacities.get(link)
    if plan.policing is None or way.rate <= 0 or way.vlan == 0 or line is None:
        return None
    share = min(way.rate, line)
    ceiling = share if plan.policing is Policing.HARD else line
    return Queue(_real(wiring, abstract, way.port), way.vlan, share, ceiling, line)


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
