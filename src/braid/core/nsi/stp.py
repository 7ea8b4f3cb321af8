"""Service termination points: `urn:ogf:network:DOMAIN:topology:PORT?vlan=N` <-> braid's edge.

braid publishes one NSI network, `urn:ogf:network:DOMAIN:topology`, whose
ports are the topology's nodes: an STP's local id is a node id, and the VLANs
a port takes are those its links may carry (the union of their `vlans`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from braid.core.errors import TopologyError
from braid.core.model.topology import Topology
from braid.core.model.vlans import (
    VlanSpans,
    format_vlan_spans,
    merge_vlan_spans,
    parse_vlan_spans,
)
from braid.core.nsi.errors import (
    PAYLOAD_ERROR,
    STP_UNAVAILABLE,
    TOPOLOGY_ERROR,
    UNKNOWN_STP,
    NsiError,
)

__all__ = ["Stp", "choose_vlan", "edge_ports", "format_stp", "network_id", "resolve_stp"]

URN: Final = "urn:ogf:network:"


@dataclass(frozen=True, slots=True)
class Stp:
    """An STP of braid's network: the port (a node id) and the VLANs asked for there."""

    port: str
    vlans: VlanSpans


def network_id(domain: str) -> str:
    return f"{URN}{domain}:topology"


def edge_ports(topology: Topology) -> dict[str, VlanSpans]:
    """Every node as a port, with the VLANs its links may carry (merged, ascending)."""
    spans: dict[str, list[tuple[int, int]]] = {node: [] for node in topology.nodes}
    for link in topology.links.values():
        spans[link.a].extend(link.vlans)
        spans[link.b].extend(link.vlans)
    return {node: merge_vlan_spans(pairs) for node, pairs in spans.items() if pairs}


def resolve_stp(text: str, domain: str, ports: Mapping[str, VlanSpans], field: str) -> Stp:
    """The port and VLANs `text` names; NsiError (naming `field`) if it is not braid's or
    asks for a VLAN the port does not carry."""
    prefix = network_id(domain) + ":"
    local, _, labels = text.strip().partition("?")
    if not local.startswith(prefix):
        raise NsiError(UNKNOWN_STP, field, f"{text!r} is not in network {network_id(domain)}")
    port = local[len(prefix) :]
    if port not in ports:
        known = ", ".join(sorted(ports)[:10])
        raise NsiError(UNKNOWN_STP, field, f"no port {port!r} in {network_id(domain)} ({known})")
    vlans = _requested_vlans(labels, field)
    if not any(_overlaps(span, ports[port]) for span in vlans):
        allowed = format_vlan_spans(ports[port])
        raise NsiError(
            TOPOLOGY_ERROR,
            field,
            f"VLAN {format_vlan_spans(vlans)} is outside port {port}'s {allowed}",
        )
    return Stp(port, vlans)


def choose_vlan(stp: Stp, allowed: VlanSpans, taken: Iterable[int], field: str) -> int:
    """The lowest VLAN `stp` asks for that the port carries and nobody holds then."""
    busy = set(taken)
    for low, high in stp.vlans:
        for vlan in range(low, high + 1):
            if vlan not in busy and any(a <= vlan <= b for a, b in allowed):
                return vlan
    raise NsiError(
        STP_UNAVAILABLE, field, f"VLAN {format_vlan_spans(stp.vlans)} of port {stp.port} is in use"
    )


def format_stp(domain: str, port: str, vlan: int | str) -> str:
    return f"{network_id(domain)}:{port}?vlan={vlan}"


def _requested_vlans(labels: str, field: str) -> VlanSpans:
    name, _, value = labels.partition("=")
    if name != "vlan" or not value:
        raise NsiError(
            PAYLOAD_ERROR, field, "give a VLAN label, e.g. ?vlan=1780 or ?vlan=1780-1789"
        )
    try:
        return parse_vlan_spans(value, field)
    except TopologyError as exc:
        raise NsiError(TOPOLOGY_ERROR, field, exc.message) from exc


def _overlaps(span: tuple[int, int], spans: VlanSpans) -> bool:
    return any(span[0] <= high and low <= span[1] for low, high in spans)
