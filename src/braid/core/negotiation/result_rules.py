"""The SDX rule plan of a committed multi-domain reservation, and its short form (pure).

After Commit the orchestrator knows each path's domains, its amount and the
VLAN every link owner picked on every inter-domain link the path crosses.
`committed_rule_plan` turns that into `sdx_plan.plan_sdx_rules`' plan in
``edge`` mode (flow-level splitting, seed 000 Fig. 5) with the VLANs the
agents chose; `summarise` reduces each switch's rule set to what an
operator reads: per arriving (port, VLAN), where it goes — one way, or a
select group's buckets with their weights.

Switches and ports come from the global view, which knows border points and
links but not the switches' real port numbers: an SDX is the node its
inter-domain links meet at, its ports numbered 1.. over those links sorted
by id; a site's edge is the site's end of its inter-domain link, with port
1 towards the site (LAN) and ports 2.. towards its neighbours (WAN), one per
inter-domain link ending there, by id. Datapath ids
number the domains in id order. The southbound maps these onto real ports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.negotiation.domains import BorderLink, GlobalView
from braid.core.negotiation.routes import route_links
from braid.core.negotiation.sdx_plan import EdgeSwitch, SdxRulePlan, SdxSwitch, plan_sdx_rules
from braid.core.rules.enforcement import Policing
from braid.core.rules.model import (
    Action,
    GroupAction,
    Output,
    PopVlan,
    PushVlan,
    RuleSet,
    SetVlan,
)

LAN_PORT = 1
WAN_PORT = 2


@dataclass(frozen=True, slots=True)
class CommittedPath:
    domains: tuple[str, ...]
    bandwidth: int
    vlans: Mapping[str, int]  # inter-domain link id -> the VLAN its owner picked


@dataclass(frozen=True, slots=True)
class Way:
    """One way out: port and the VLAN it leaves with (0: untagged); weight in a group;
    `rate` the bit/s of the path share that leaves this way (0: not known, not held)."""

    port: int
    vlan: int
    weight: int = 1
    rate: int = 0


@dataclass(frozen=True, slots=True)
class SwitchRule:
    in_port: int
    vlan: int  # arriving VLAN (0: untagged)
    ways: tuple[Way, ...]  # one: a plain rule; several: a select group's buckets


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """One switch's rules; `policing` says how the domain holds the ways' rates (None: it
    only routes, as a plan from an orchestrator that sends no rates)."""

    domain: str
    switch: str
    dpid: int
    rules: tuple[SwitchRule, ...]
    policing: Policing | None = None

    def line(self) -> str:
        """One line: `switch: p1/v100 -> p2/v1000 | ...`, groups as `{p2/v1000 w3, ...}`."""
        parts = []
        for r in self.rules:
            ways = [f"p{w.port}/{_vlan(w.vlan)}" for w in r.ways]
            if len(r.ways) > 1:
                ways = [f"{text} w{w.weight}" for text, w in zip(ways, r.ways, strict=True)]
                target = "{" + ", ".join(ways) + "}"
            else:
                target = ways[0]
            parts.append(f"p{r.in_port}/{_vlan(r.vlan)} -> {target}")
        return f"{self.switch} ({self.domain}): " + "; ".join(parts)


def committed_rule_plan(
    view: GlobalView, reservation_id: str, paths: Sequence[CommittedPath]
) -> SdxRulePlan:
    """The edge-mode rule plan of a committed reservation, with the agents' VLANs."""
    used = [p for p in paths if p.bandwidth > 0]
    if not used:
        raise InputError("paths", "no path carries any bandwidth")
    routes = {p.domains: route_links(view, p.domains) for p in used}
    chosen = []
    for i, path in enumerate(used):
        links = routes[path.domains]
        missing = [link for link in links if link not in path.vlans]
        if missing:
            raise InputError(f"paths[{i}].vlans", f"no VLAN chosen on link {missing[0]}")
        chosen.append([path.vlans[link] for link in links])
    on_paths = {d for p in used for d in p.domains}
    dpids = {d: i + 1 for i, d in enumerate(sorted(view.domains))}
    sdxs = {
        d: _sdx_switch(view, d, dpids[d]) for d in sorted(on_paths) if view.domains[d].kind == "sdx"
    }
    ends = (used[0].domains[0], used[0].domains[-1])
    edges = {site: _edge_switch(view, site, routes, dpids[site]) for site in ends}
    return plan_sdx_rules(
        reservation_id,
        [p.domains for p in used],
        [p.bandwidth for p in used],
        vlan_ranges={},
        sdxs=sdxs,
        edges=edges,
        mode="edge",
        chosen_vlans=chosen,
    )


def summarise(plan: SdxRulePlan, view: GlobalView) -> tuple[SwitchPlan, ...]:
    """Every switch's rules in short: arriving (port, VLAN) -> ways out."""
    domain_of = {s: d for d in view.domains for s in _nodes_of(view, d)}
    return tuple(
        _summary(rule_set, domain_of.get(rule_set.switch, "")) for rule_set in plan.rule_sets
    )


def _summary(rule_set: RuleSet, domain: str) -> SwitchPlan:
    groups = {g.group_id: g for g in rule_set.groups}
    rules = []
    for flow in rule_set.flows:
        first = flow.actions[0] if flow.actions else None
        if isinstance(first, GroupAction):
            ways = tuple(
                _way(b.actions, flow.match.vlan_vid or 0, b.weight)
                for b in groups[first.group_id].buckets
            )
        else:
            ways = (_way(flow.actions, flow.match.vlan_vid or 0, 1),)
        rules.append(SwitchRule(flow.match.in_port or 0, flow.match.vlan_vid or 0, ways))
    return SwitchPlan(domain, rule_set.switch, rule_set.dpid, tuple(rules))


def _way(actions: Sequence[Action], vlan_in: int, weight: int) -> Way:
    vlan, port = vlan_in, 0
    for action in actions:
        if isinstance(action, (SetVlan, PushVlan)):
            vlan = action.vid
        elif isinstance(action, PopVlan):
            vlan = 0
        elif isinstance(action, Output):
            port = action.port
    return Way(port, vlan, weight)


def _sdx_switch(view: GlobalView, domain: str, dpid: int) -> SdxSwitch:
    links = sorted(view.links_of(domain), key=lambda link: link.id)
    nodes = {_end_in(link, domain) for link in links}
    if len(nodes) != 1:
        raise InputError("domains", f"SDX {domain} must meet its neighbours at one switch")
    ports: dict[str, int] = {}
    for port, link in enumerate(links, start=1):
        ports.setdefault(link.other_domain(domain), port)
    return SdxSwitch(domain, nodes.pop(), dpid, ports)


def _edge_switch(
    view: GlobalView, site: str, routes: Mapping[tuple[str, ...], Sequence[str]], dpid: int
) -> EdgeSwitch:
    first = {links[0 if domains[0] == site else -1] for domains, links in routes.items()}
    if len(first) != 1:
        raise InputError("paths", f"the paths leave site {site} by different links")
    link = view.links[first.pop()]
    node = _end_in(link, site)
    return EdgeSwitch(site, node, dpid, LAN_PORT, site_wan_ports(view, site, node)[link.id])


def site_wan_ports(view: GlobalView, site: str, node: str) -> dict[str, int]:
    """A site edge's WAN ports: 2.. over the inter-domain links that end at `node`, by id.

    An edge with one such link has it at port 2; one with several tells them apart,
    so the traffic leaves by the link its path was booked on.
    """
    links = sorted(
        (link for link in view.links_of(site) if _end_in(link, site) == node),
        key=lambda link: link.id,
    )
    return {link.id: port for port, link in enumerate(links, start=WAN_PORT)}


def _end_in(link: BorderLink, domain: str) -> str:
    return link.a if link.a_domain == domain else link.b


def _nodes_of(view: GlobalView, domain: str) -> set[str]:
    return {_end_in(link, domain) for link in view.links_of(domain)}


def _vlan(vlan: int) -> str:
    return f"v{vlan}" if vlan else "untagged"
