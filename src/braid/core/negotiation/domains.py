"""The orchestrator's global view: domains, their border points, the links between them.

A multi-domain topology file describes every domain's nodes and links, but the
orchestrator keeps only what crosses a domain boundary: each domain's kind,
agent and visibility, its border points, and the inter-domain links with their
VLAN ranges. A domain's inside is its agent's business (`domain_topology_dict`
cuts out the part one agent serves).

Every inter-domain link is *owned* by one of its two domains, whose agent books
its capacity and picks its VLANs; the other end is the *hand-off point* where
one domain's segment stops and the next one's starts. By default an SDX owns
its links (it is the exchange), then a WAN owns its links to sites; the file
may say `owner:` explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from braid.core.errors import TopologyError
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.model.units import parse_bandwidth
from braid.core.model.vlans import parse_vlan_spans
from braid.core.nsi.peer import BorderEnd, NsiPeer, parse_nsi_peer

DOMAIN_KINDS = ("site", "wan", "sdx", "nsi")
# An NSI domain owns its border links: only its provider can pick the VLAN.
_OWNER_RANK = {"nsi": -1, "sdx": 0, "wan": 1, "site": 2}
_ADDRESS = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$")


@dataclass(frozen=True, slots=True)
class DomainSpec:
    id: str
    kind: str
    visible: bool
    agent: str | None
    # How to reach the provider of a domain of kind nsi (none for braid agents' domains).
    nsi: NsiPeer | None = None


@dataclass(frozen=True, slots=True)
class VlanRange:
    low: int
    high: int

    def __contains__(self, vlan: object) -> bool:
        return isinstance(vlan, int) and self.low <= vlan <= self.high


@dataclass(frozen=True, slots=True)
class BorderLink:
    """A link between two domains; `handoff` is its end in the non-owning domain."""

    id: str
    a: str
    b: str
    a_domain: str
    b_domain: str
    capacity: int
    vlans: VlanRange
    owner: str

    @property
    def handoff(self) -> str:
        return self.b if self.owner == self.a_domain else self.a

    def other_domain(self, domain: str) -> str:
        return self.b_domain if domain == self.a_domain else self.a_domain


@dataclass(frozen=True)
class GlobalView:
    domains: Mapping[str, DomainSpec]
    links: Mapping[str, BorderLink]
    borders: Mapping[str, frozenset[str]]

    def links_of(self, domain: str) -> tuple[BorderLink, ...]:
        return tuple(
            link for link in self.links.values() if domain in (link.a_domain, link.b_domain)
        )

    def nsi_ends(self, domain: str) -> tuple[BorderEnd, ...]:
        """An NSI domain's border links, each with its hand-off point and its NSI-side node."""
        out = []
        for link in self.links_of(domain):
            node = link.a if link.a_domain == domain else link.b
            low, high = link.vlans.low, link.vlans.high
            out.append(BorderEnd(link.id, link.handoff, node, link.capacity, low, high))
        return tuple(out)

    def require_domain(self, domain: str, field: str) -> DomainSpec:
        spec = self.domains.get(domain)
        if spec is None:
            raise TopologyError(field, f"unknown domain {domain!r}")
        return spec


def global_view_from_dict(data: Mapping[str, Any]) -> GlobalView:
    """Validate the multi-domain parts of a topology dict; errors name the field."""
    domains = _domains(data.get("domains"))
    node_domain = _node_domains(data.get("nodes"), domains)
    links: dict[str, BorderLink] = {}
    raw_links = data.get("links")
    if not isinstance(raw_links, list):
        raise TopologyError("links", "must be a list")
    for i, item in enumerate(raw_links):
        link = _border_link(item, f"links[{i}]", node_domain, domains)
        if link is not None:
            links[link.id] = link
    borders: dict[str, set[str]] = {d: set() for d in domains}
    for link in links.values():
        borders[link.a_domain].add(link.a)
        borders[link.b_domain].add(link.b)
    _check_nsi_stps(domains, borders, node_domain)
    return GlobalView(domains, links, {d: frozenset(p) for d, p in borders.items()})


def nsi_peers(view: GlobalView) -> dict[str, NsiPeer]:
    """The provider of every NSI domain; TopologyError if one has none (a neighbour's entry)."""
    out = {}
    for i, spec in enumerate(view.domains.values()):
        if spec.kind == "nsi":
            if spec.nsi is None:
                raise TopologyError(f"domains[{i}].nsi", "an nsi domain needs provider, nsa, stps")
            out[spec.id] = spec.nsi
    return out


def _check_nsi_stps(
    domains: Mapping[str, DomainSpec], borders: Mapping[str, set[str]], nodes: Mapping[str, str]
) -> None:
    """Every border node of an NSI domain has an STP, and every STP is such a node."""
    for i, spec in enumerate(domains.values()):
        if spec.nsi is None:
            continue
        field = f"domains[{i}].nsi.stps"
        for node in spec.nsi.stps:
            if nodes.get(node) != spec.id:
                raise TopologyError(f"{field}.{node}", f"not a node of domain {spec.id!r}")
        missing = sorted(borders[spec.id] - set(spec.nsi.stps))
        if missing:
            raise TopologyError(field, f"no STP for border node {missing[0]!r}")


def _domains(value: object) -> dict[str, DomainSpec]:
    if not isinstance(value, list) or not value:
        raise TopologyError("domains", "a multi-domain topology needs a non-empty 'domains' list")
    out: dict[str, DomainSpec] = {}
    for i, item in enumerate(value):
        where = f"domains[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str) or not item["id"]:
            raise TopologyError(f"{where}.id", "missing or not a non-empty string")
        kind = item.get("kind", "wan")
        if kind not in DOMAIN_KINDS:
            raise TopologyError(f"{where}.kind", f"must be one of {', '.join(DOMAIN_KINDS)}")
        visible = item.get("visible", kind != "nsi")
        if not isinstance(visible, bool):
            raise TopologyError(f"{where}.visible", "must be true or false")
        agent = item.get("agent")
        if agent is not None and not (isinstance(agent, str) and _valid_address(agent)):
            raise TopologyError(f"{where}.agent", f"must be 'host:port', got {agent!r}")
        if item["id"] in out:
            raise TopologyError(f"{where}.id", f"duplicate id {item['id']!r}")
        out[item["id"]] = DomainSpec(item["id"], kind, visible, agent, _nsi(item, kind, where))
    return out


def _nsi(item: Mapping[str, Any], kind: str, where: str) -> NsiPeer | None:
    """An NSI domain's provider; it is blind (yes or no to a concrete request) and has no agent."""
    if kind != "nsi":
        if "nsi" in item:
            raise TopologyError(f"{where}.nsi", "only a domain of kind nsi has one")
        return None
    if item.get("visible", False) is not False:
        raise TopologyError(f"{where}.visible", "an nsi domain is blind: leave it out or say false")
    if item.get("agent") is not None:
        raise TopologyError(
            f"{where}.agent", "an nsi domain has no braid agent (see its nsi entry)"
        )
    # A neighbour's entry in an agent's own file names only its id and kind; the
    # orchestrator requires the provider (`nsi_peers`).
    return None if item.get("nsi") is None else parse_nsi_peer(item["nsi"], f"{where}.nsi")


def _valid_address(text: str) -> bool:
    match = _ADDRESS.match(text)
    return match is not None and 0 < int(match.group(2)) < 65536


def _node_domains(value: object, domains: Mapping[str, DomainSpec]) -> dict[str, str]:
    if not isinstance(value, list):
        raise TopologyError("nodes", "must be a list")
    out: dict[str, str] = {}
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            raise TopologyError(f"nodes[{i}].id", "missing or not a string")
        domain = item.get("domain")
        if domain is None:
            raise TopologyError(f"nodes[{i}].domain", "every node needs a domain here")
        if domain not in domains:
            raise TopologyError(f"nodes[{i}].domain", f"unknown domain {domain!r}")
        out[item["id"]] = domain
    return out


def _border_link(
    item: object,
    where: str,
    node_domain: Mapping[str, str],
    domains: Mapping[str, DomainSpec],
) -> BorderLink | None:
    if not isinstance(item, Mapping):
        raise TopologyError(where, "must be a mapping")
    a, b = item.get("a"), item.get("b")
    for end, node in (("a", a), ("b", b)):
        if node not in node_domain:
            raise TopologyError(f"{where}.{end}", f"unknown node {node!r}")
    assert isinstance(a, str) and isinstance(b, str)
    a_domain, b_domain = node_domain[a], node_domain[b]
    if a_domain == b_domain:
        for key in ("vlans", "owner"):
            if key in item:
                raise TopologyError(f"{where}.{key}", "only links between two domains have one")
        return None
    capacity = parse_bandwidth(item.get("capacity"), f"{where}.capacity")
    vlans = parse_vlan_range(item.get("vlans"), f"{where}.vlans")
    owner = _owner(item.get("owner"), a_domain, b_domain, domains, f"{where}.owner")
    return BorderLink(str(item.get("id")), a, b, a_domain, b_domain, capacity, vlans, owner)


def parse_vlan_range(value: object, field: str) -> VlanRange:
    """One range ('100-199', a single number, or [low, high]) within 1..4094."""
    if isinstance(value, bool) or value is None:
        raise TopologyError(field, "missing; an inter-domain link needs a VLAN range like 100-199")
    spans = parse_vlan_spans(value, field)
    if len(spans) != 1:
        raise TopologyError(
            field, f"an inter-domain link takes one range like 100-199; got {value!r}"
        )
    return VlanRange(*spans[0])


def _owner(
    value: object, a_domain: str, b_domain: str, domains: Mapping[str, DomainSpec], field: str
) -> str:
    nsi = [d for d in (a_domain, b_domain) if domains[d].kind == "nsi"]
    if len(nsi) == 2:
        raise TopologyError(field.rpartition(".")[0], "two nsi domains cannot be linked directly")
    if value is not None:
        if value not in (a_domain, b_domain):
            raise TopologyError(field, f"must be {a_domain!r} or {b_domain!r}, got {value!r}")
        if nsi and value != nsi[0]:
            raise TopologyError(field, f"a link of nsi domain {nsi[0]!r} is owned by it")
        return str(value)
    ranks = (_OWNER_RANK[domains[a_domain].kind], _OWNER_RANK[domains[b_domain].kind])
    return b_domain if ranks[1] < ranks[0] else a_domain


def strip_domain_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """The topology dict without the link keys only the multi-domain view reads."""
    out = dict(data)
    out["links"] = [
        {k: v for k, v in link.items() if k not in ("vlans", "owner")}
        if isinstance(link, Mapping)
        else link
        for link in data.get("links") or []
    ]
    return out


def domain_topology_dict(data: Mapping[str, Any], view: GlobalView, domain: str) -> dict[str, Any]:
    """The part of the network that `domain`'s agent serves.

    Its own nodes and inside links, plus every inter-domain link it owns with
    the far end (the hand-off point) as a stub node.
    """
    view.require_domain(domain, "domain")
    owned = {link.id: link for link in view.links.values() if link.owner == domain}
    stubs = {link.handoff for link in owned.values()}
    nodes = [
        {k: v for k, v in n.items() if k in ("id", "name", "lat", "lon")}
        for n in _mappings(data.get("nodes"))
        if n.get("domain") == domain or n.get("id") in stubs
    ]
    inside = points_of(data, domain)
    links = [
        {k: v for k, v in link.items() if k not in ("vlans", "owner")}
        for link in _mappings(data.get("links"))
        if link.get("id") in owned or (link.get("id") not in view.links and link.get("a") in inside)
    ]
    return {"nodes": nodes, "links": links}


def _mappings(value: object) -> Sequence[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def points_of(data: Mapping[str, Any], domain: str) -> frozenset[str]:
    """Every node a domain's agent may name in a span (its own nodes)."""
    return frozenset(
        str(n["id"]) for n in _mappings(data.get("nodes")) if n.get("domain") == domain
    )


@dataclass(frozen=True)
class MultiDomainNetwork:
    """A multi-domain topology as read: its data, the global view, and each domain's part."""

    source: str  # where it was read from, for messages
    data: dict[str, Any]
    view: GlobalView

    def domain_topology(self, domain: str) -> Topology:
        """What `domain`'s agent schedules: its inside plus the inter-domain links it owns."""
        return topology_from_dict(domain_topology_dict(self.data, self.view, domain))

    def points(self, domain: str) -> frozenset[str]:
        return points_of(self.data, domain)
