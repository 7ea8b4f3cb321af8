"""What a domain publishes about itself, and the global view an orchestrator builds from it.

A domain keeps its inside to itself. Its agent publishes an *abstract view*
(`DomainPart`): its kind and visibility, the points a request may name, and
its peerings — each inter-domain link at its border with the far end, the
capacity, the VLAN range and the owner. The orchestrator merges the parts of
every agent it knows into its `GlobalView` (`merge_parts`); nothing there
comes from another domain's file.

`domain_file_dict` cuts one domain's own file out of a single multi-domain
file: its domain entry, its nodes and inside links, its border links with
their far ends (a node of the neighbour, named with the neighbour's domain),
and the neighbours' ids and kinds (a link's default owner depends on them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from braid.core.negotiation.domains import (
    BorderLink,
    DomainSpec,
    GlobalView,
    MultiDomainNetwork,
    points_of,
)

__all__ = ["DomainPart", "MergedView", "domain_file_dict", "domain_part", "merge_parts"]


@dataclass(frozen=True, slots=True)
class DomainPart:
    """One domain's abstract view: what its agent publishes."""

    domain: str
    kind: str
    visible: bool
    points: frozenset[str]  # every point a span or an endpoint may name
    peerings: tuple[BorderLink, ...]  # its inter-domain links, as its file has them

    @property
    def version(self) -> str:
        """Changes whenever anything published changes (the orchestrator refreshes on it)."""
        content = json.dumps(
            [
                self.domain,
                self.kind,
                self.visible,
                sorted(self.points),
                sorted(repr(link) for link in self.peerings),  # every field, by name
            ]
        )
        return hashlib.sha256(content.encode()).hexdigest()[:16]


def domain_part(network: MultiDomainNetwork, domain: str) -> DomainPart:
    """`domain`'s abstract view from the file its agent reads (its own or the shared one)."""
    spec = network.view.require_domain(domain, "domain")
    peerings = tuple(sorted(network.view.links_of(domain), key=lambda link: link.id))
    points = points_of(network.data, domain)
    return DomainPart(domain, spec.kind, spec.visible, points, peerings)


@dataclass(frozen=True)
class MergedView:
    view: GlobalView
    points: Mapping[str, frozenset[str]]
    # Links the two ends describe differently: the owner's description is used.
    disagreements: tuple[str, ...]


def merge_parts(parts: Iterable[DomainPart], addresses: Mapping[str, str]) -> MergedView:
    """The global view from the parts of the domains heard from.

    A link enters the view once both of its domains have published; where the
    two ends disagree, the owner's word stands (it books the link) and the link
    is named in `disagreements`.
    """
    known = {part.domain: part for part in parts}
    domains = {
        d: DomainSpec(d, part.kind, part.visible, addresses.get(d)) for d, part in known.items()
    }
    described: dict[str, dict[str, BorderLink]] = {}
    for part in known.values():
        for link in part.peerings:
            if part.domain in (link.a_domain, link.b_domain):
                described.setdefault(link.id, {})[part.domain] = link
    links: dict[str, BorderLink] = {}
    disagreements = []
    for link_id, ends in sorted(described.items()):
        if len(ends) < 2:
            continue  # the far domain has not published it (yet, or at all)
        # The owner books the link: its description stands (the first end's, if
        # neither or both claim it).
        claims = [link for domain, link in ends.items() if link.owner == domain]
        chosen = claims[0] if len(claims) == 1 else next(iter(ends.values()))
        if {chosen.a_domain, chosen.b_domain} != set(ends):
            disagreements.append(link_id)
            continue  # the ends do not even agree on which domains it joins
        links[link_id] = chosen
        if len(set(ends.values())) > 1:
            disagreements.append(link_id)
    borders: dict[str, set[str]] = {d: set() for d in domains}
    for link in links.values():
        borders[link.a_domain].add(link.a)
        borders[link.b_domain].add(link.b)
    view = GlobalView(domains, links, {d: frozenset(p) for d, p in borders.items()})
    points = {d: part.points for d, part in known.items()}
    return MergedView(view, points, tuple(disagreements))


def domain_file_dict(network: MultiDomainNetwork, domain: str) -> dict[str, Any]:
    """`domain`'s own file, cut out of a single multi-domain file (for `braid topology split`)."""
    view = network.view
    own = view.require_domain(domain, "domain")
    links = view.links_of(domain)
    neighbours = sorted({link.other_domain(domain) for link in links})
    far_ends = {link.b if link.a_domain == domain else link.a for link in links}
    entry: dict[str, Any] = {"id": own.id, "kind": own.kind, "visible": own.visible}
    if own.agent:
        entry["agent"] = own.agent
    entries = [d for d in _mappings(network.data.get("domains")) if d.get("id") == domain]
    if own.kind == "nsi" and entries and "nsi" in entries[0]:
        entry["nsi"] = entries[0]["nsi"]  # the provider, for an orchestrator reading this file
    domains = [entry] + [{"id": d, "kind": view.domains[d].kind} for d in neighbours]
    nodes = [
        dict(n)
        for n in _mappings(network.data.get("nodes"))
        if n.get("domain") == domain or n.get("id") in far_ends
    ]
    for node in nodes:
        if node.get("id") in far_ends:  # the neighbour's node: its name only
            for key in [k for k in node if k not in ("id", "domain")]:
                del node[key]
    inside = points_of(network.data, domain)
    border = {link.id: link for link in links}
    out_links = []
    for raw in _mappings(network.data.get("links")):
        if raw.get("id") in border:
            out_links.append({**raw, "owner": border[str(raw["id"])].owner})
        elif raw.get("id") not in view.links and raw.get("a") in inside:
            out_links.append(dict(raw))
    name = f"{network.data['name']}-{domain}" if network.data.get("name") else domain
    return {"name": name, "domains": domains, "nodes": nodes, "links": out_links}


def _mappings(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []
