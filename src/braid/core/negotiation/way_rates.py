"""The rate of every way out of a committed multi-domain plan, so each domain can hold it.

Each path of a committed reservation leaves every inter-domain link with the
VLAN that link's owner picked for it, so a way out (port, VLAN) of any
switch belongs to exactly one path, whose share is that way's rate. Ways
towards a site's LAN carry no rate: a domain holds rates on the links
between domains, and the LAN side is the site's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from braid.core.negotiation.domain_rules import LAN, abstract_ports
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.result_rules import CommittedPath, SwitchPlan, Way
from braid.core.rules.enforcement import Policing

__all__ = ["with_way_rates"]


def with_way_rates(
    plans: Sequence[SwitchPlan],
    view: GlobalView,
    paths: Sequence[CommittedPath],
    policing: Policing = Policing.SOFT,
) -> tuple[SwitchPlan, ...]:
    """`plans` with each way's path share as its rate and `policing` on every switch."""
    share = {(link, vlan): path.bandwidth for path in paths for link, vlan in path.vlans.items()}
    ports = {domain: abstract_ports(view, domain) for domain in {p.domain for p in plans}}
    rated = []
    for plan in plans:
        named = ports[plan.domain].get(plan.switch, {})
        rules = tuple(
            dataclasses.replace(rule, ways=tuple(_rated(w, named, share) for w in rule.ways))
            for rule in plan.rules
        )
        rated.append(dataclasses.replace(plan, rules=rules, policing=policing))
    return tuple(rated)


def _rated(way: Way, named: Mapping[int, str], share: Mapping[tuple[str, int], int]) -> Way:
    link = named.get(way.port, LAN)
    rate = 0 if link == LAN else share.get((link, way.vlan), 0)
    return dataclasses.replace(way, rate=rate)
