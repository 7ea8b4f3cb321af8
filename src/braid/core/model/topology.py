"""The network: nodes, full-duplex links (parallel links allowed), domains."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from braid.core.errors import InputError, TopologyError
from braid.core.model.geo import fibre_latency_ms
from braid.core.model.units import parse_bandwidth, to_mbps
from braid.core.model.vlans import ALL_VLANS, VlanSpans, format_vlan_spans, parse_vlan_spans

DOMAIN_KINDS = ("site", "wan", "sdx", "nsi")
LINK_STATES = ("up", "down")
# A link's one-way latency is at most 100 s: more than a geostationary hop
# a hundred times over; a larger (or infinite) figure is a mistake in the file.
MAX_LATENCY_MS = 100_000


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    name: str = ""
    domain: str | None = None
    lat: float | None = None
    lon: float | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A full-duplex link: `capacity` bit/s in each direction."""

    id: str
    a: str
    b: str
    capacity: int
    latency_ms: float
    extra: Mapping[str, Any] = field(default_factory=dict)
    vlans: VlanSpans = ALL_VLANS  # the VLANs this link may carry
    # A down link stays in the topology (bookings on it keep their capacity
    # accounting) but leaves the adjacency, so no search finds a path over it.
    up: bool = True


@dataclass(frozen=True, slots=True)
class Domain:
    id: str
    kind: str = "wan"
    visible: bool = True
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Hop:
    """Leaving a node over `link`, towards `to`; `forward` is True when going a -> b."""

    link: str
    to: str
    forward: bool


@dataclass(frozen=True)
class Topology:
    nodes: Mapping[str, Node]
    links: Mapping[str, Link]
    domains: Mapping[str, Domain] = field(default_factory=dict)
    adjacency: Mapping[str, tuple[Hop, ...]] = field(default_factory=dict)

    def hops(self, node: str) -> tuple[Hop, ...]:
        return self.adjacency.get(node, ())

    def require_node(self, node: str, field_name: str) -> None:
        if node not in self.nodes:
            raise InputError(field_name, f"unknown node {node!r}{self._did_you_mean(node)}")

    def require_link(self, link: object, field_name: str) -> str:
        if not isinstance(link, str) or link not in self.links:
            close = difflib.get_close_matches(str(link), list(self.links), n=3, cutoff=0.75)
            same = [k for k in self.links if k.casefold() == str(link).casefold()]
            hint = same[:1] or close
            suffix = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError(field_name, f"unknown link {link!r}{suffix}")
        return link

    def _did_you_mean(self, given: str) -> str:
        """A hint for a mistyped node: another case, a node's name (GraphML ids are
        numbers, their labels are names), or the closest ids."""
        wanted = str(given).casefold()
        same = [n for n in self.nodes if n.casefold() == wanted]
        if same:
            return f"; did you mean {same[0]!r}?"
        named = [n.id for n in self.nodes.values() if n.name and n.name.casefold() == wanted]
        if named:
            return f"; the node named {given!r} has id {named[0]!r}"
        close = difflib.get_close_matches(str(given), list(self.nodes), n=3, cutoff=0.75)
        return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def topology_from_dict(
    data: Mapping[str, Any],
    *,
    default_capacity_bps: int | None = None,
    default_latency_ms: float = 1.0,
) -> Topology:
    """Validate braid's topology format and build the model; errors name the field."""
    if not isinstance(data, Mapping):
        raise TopologyError("", "a topology must be a mapping with 'nodes' and 'links'")
    unknown = set(data) - {"v", "nodes", "links", "domains", "notes", "name"}
    if unknown:
        raise TopologyError(sorted(unknown)[0], "unknown top-level key")
    if data.get("v", 1) != 1:  # what `topology_to_dict` (braid topology export) writes
        raise TopologyError("v", f"this braid reads topology format 1, not {data['v']!r}")
    domains = _domains(_list(data, "domains", required=False))
    nodes = _nodes(_list(data, "nodes"), domains)
    links = _links(_list(data, "links"), nodes, default_capacity_bps, default_latency_ms)
    return Topology(nodes, links, domains, _adjacency(nodes, links))


def _list(data: Mapping[str, Any], key: str, *, required: bool = True) -> Sequence[Any]:
    value = data.get(key)
    if value is None:
        if required:
            raise TopologyError(key, "missing; a topology needs 'nodes' and 'links' lists")
        return []
    if not isinstance(value, list):
        raise TopologyError(key, f"must be a list, got {type(value).__name__}")
    return value


def _entry(item: object, where: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise TopologyError(where, "must be a mapping")
    unknown = set(item) - allowed
    if unknown:
        raise TopologyError(f"{where}.{sorted(unknown)[0]}", "unknown key")
    if not isinstance(item.get("id"), str) or not item["id"]:
        raise TopologyError(f"{where}.id", "missing or not a non-empty string")
    return item


def _domains(items: Sequence[Any]) -> dict[str, Domain]:
    domains: dict[str, Domain] = {}
    for i, item in enumerate(items):
        where = f"domains[{i}]"
        # `nsi` (an NSI domain's provider) is read by the negotiation's view.
        entry = _entry(item, where, {"id", "kind", "visible", "agent", "name", "nsi"})
        kind = entry.get("kind", "wan")
        if kind not in DOMAIN_KINDS:
            raise TopologyError(f"{where}.kind", f"must be one of {', '.join(DOMAIN_KINDS)}")
        visible = entry.get("visible", kind != "nsi")
        if not isinstance(visible, bool):
            raise TopologyError(f"{where}.visible", "must be true or false")
        agent = entry.get("agent")
        if agent is not None and not isinstance(agent, str):
            raise TopologyError(f"{where}.agent", "must be a 'host:port' string")
        _unique(domains, entry["id"], where)
        domains[entry["id"]] = Domain(entry["id"], kind, visible, agent)
    return domains


def _nodes(items: Sequence[Any], domains: Mapping[str, Domain]) -> dict[str, Node]:
    nodes: dict[str, Node] = {}
    for i, item in enumerate(items):
        where = f"nodes[{i}]"
        entry = _entry(item, where, {"id", "name", "domain", "lat", "lon"})
        domain = entry.get("domain")
        if domain is not None and domains and domain not in domains:
            raise TopologyError(f"{where}.domain", f"unknown domain {domain!r}")
        lat = _coordinate(entry.get("lat"), f"{where}.lat", 90.0)
        lon = _coordinate(entry.get("lon"), f"{where}.lon", 180.0)
        _unique(nodes, entry["id"], where)
        nodes[entry["id"]] = Node(entry["id"], str(entry.get("name") or ""), domain, lat, lon)
    if not nodes:
        raise TopologyError("nodes", "a topology needs at least one node")
    return nodes


def _coordinate(value: object, where: str, bound: float) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or abs(value) > bound
    ):
        raise TopologyError(where, f"must be a number between -{bound:g} and {bound:g}")
    return float(value)


def _links(
    items: Sequence[Any],
    nodes: Mapping[str, Node],
    default_capacity: int | None,
    default_latency: float,
) -> dict[str, Link]:
    links: dict[str, Link] = {}
    allowed = {
        "id", "a", "b", "capacity", "latency_ms", "name", "oscars", "vlans", "owner", "state"
    }  # fmt: skip
    for i, item in enumerate(items):
        where = f"links[{i}]"
        entry = _entry(item, where, allowed)
        for end in ("a", "b"):
            if entry.get(end) not in nodes:
                raise TopologyError(f"{where}.{end}", f"unknown node {entry.get(end)!r}")
        if entry["a"] == entry["b"]:
            raise TopologyError(f"{where}.b", "a link must join two different nodes")
        capacity = _capacity(entry, where, default_capacity)
        latency = _latency(entry, where, nodes, default_latency)
        extra = {k: v for k, v in entry.items() if k in ("oscars", "name", "vlans", "owner")}
        vlans = (
            parse_vlan_spans(entry["vlans"], f"{where}.vlans") if "vlans" in entry else ALL_VLANS
        )
        _unique(links, entry["id"], where)
        links[entry["id"]] = Link(
            entry["id"], entry["a"], entry["b"], capacity, latency, extra, vlans,
            _link_up(entry, where),
        )  # fmt: skip
    return links


def _link_up(entry: Mapping[str, Any], where: str) -> bool:
    state = entry.get("state", "up")
    if state not in LINK_STATES:
        raise TopologyError(f"{where}.state", f"must be one of {', '.join(LINK_STATES)}")
    return bool(state == "up")


def _capacity(entry: Mapping[str, Any], where: str, default: int | None) -> int:
    if "capacity" not in entry:
        if default is None:
            raise TopologyError(f"{where}.capacity", "missing; give one or pass a default capacity")
        return default
    try:
        return parse_bandwidth(entry["capacity"], f"{where}.capacity")
    except InputError as exc:
        raise TopologyError(exc.field, exc.message) from exc


def _latency(
    entry: Mapping[str, Any], where: str, nodes: Mapping[str, Node], default: float
) -> float:
    value = entry.get("latency_ms")
    if value is not None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= MAX_LATENCY_MS  # False for nan too
        ):
            raise TopologyError(
                f"{where}.latency_ms", f"must be a number from 0 to {MAX_LATENCY_MS} (ms)"
            )
        return float(value)
    a, b = nodes[entry["a"]], nodes[entry["b"]]
    if None in (a.lat, a.lon, b.lat, b.lon):
        return default
    assert a.lat is not None and a.lon is not None and b.lat is not None and b.lon is not None
    return fibre_latency_ms(a.lat, a.lon, b.lat, b.lon)


def _unique(seen: Mapping[str, object], key: str, where: str) -> None:
    if key in seen:
        raise TopologyError(f"{where}.id", f"duplicate id {key!r}")


def _adjacency(nodes: Mapping[str, Node], links: Mapping[str, Link]) -> dict[str, tuple[Hop, ...]]:
    out: dict[str, list[Hop]] = {node: [] for node in nodes}
    for link in links.values():
        if not link.up:
            continue
        out[link.a].append(Hop(link.id, link.b, True))
        out[link.b].append(Hop(link.id, link.a, False))
    return {node: tuple(hops) for node, hops in out.items()}


def topology_to_dict(topology: Topology) -> dict[str, Any]:
    """The normalised topology (capacity in Mbit/s) that outside checkers read."""
    return {
        "v": 1,
        "nodes": [_node_dict(n) for n in topology.nodes.values()],
        "links": [_link_dict(link) for link in topology.links.values()],
        "domains": [
            {"id": d.id, "kind": d.kind, "visible": d.visible, "agent": d.agent}
            for d in topology.domains.values()
        ],
    }


def _link_dict(link: Link) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": link.id,
        "a": link.a,
        "b": link.b,
        "capacity": to_mbps(link.capacity),
        "latency_ms": round(link.latency_ms, 6),
    }
    if link.vlans != ALL_VLANS:  # kept, so a stored or exported topology keeps its labels
        out["vlans"] = format_vlan_spans(link.vlans)
    if not link.up:  # only down links say so: an all-up export reads as it always did
        out["state"] = "down"
    return out


def _node_dict(node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"id": node.id}
    for key in ("name", "domain", "lat", "lon"):
        value = getattr(node, key)
        if value not in (None, ""):
            out[key] = value
    return out
