"""braid's NSI topology (NML) and discovery documents, generated from its topology.

The NML document names one network, `urn:ogf:network:DOMAIN:topology`, with
a bidirectional port per node and the VLANs each carries (`core.nsi.stp`);
the discovery document says where the CS 2.0 provider and that topology are.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

from braid.adapters.nsi.soap import sub, timestamp
from braid.core.model.topology import Topology
from braid.core.model.vlans import format_vlan_spans
from braid.core.nsi.stp import edge_ports, network_id

__all__ = ["discovery_document", "nml_document", "topology_path"]

NML: Final = "http://schemas.ogf.org/nml/2013/05/base#"
ETHERNET: Final = "http://schemas.ogf.org/nml/2012/10/ethernet"
DISCOVERY: Final = "http://schemas.ogf.org/nsi/2014/02/discovery/nsa"
PROVIDER_TYPE: Final = "application/vnd.ogf.nsi.cs.v2.provider+soap"
TOPOLOGY_TYPE: Final = "application/vnd.ogf.nsi.topology.v2+xml"


def topology_path(domain: str) -> str:
    return f"/NSI/{domain}:topology.nml.xml"


def nml_document(domain: str, topology: Topology, version: int) -> bytes:
    network = network_id(domain)
    root = etree.Element(f"{{{NML}}}Topology", nsmap={"nml": NML})
    root.set("id", network)
    root.set("version", timestamp(version))
    sub(root, f"{{{NML}}}name", domain)
    ports = edge_ports(topology)
    for port in sorted(ports):
        bidirectional = sub(root, f"{{{NML}}}BidirectionalPort")
        bidirectional.set("id", f"{network}:{port}")
        sub(bidirectional, f"{{{NML}}}name", port)
        for direction in ("in", "out"):
            sub(bidirectional, f"{{{NML}}}PortGroup").set("id", f"{network}:{port}-{direction}")
    for relation, direction in (("hasInboundPort", "in"), ("hasOutboundPort", "out")):
        node = sub(root, f"{{{NML}}}Relation")
        node.set("type", f"{NML}{relation}")
        for port in sorted(ports):
            group = sub(node, f"{{{NML}}}PortGroup")
            group.set("encoding", ETHERNET)
            group.set("id", f"{network}:{port}-{direction}")
            labels = sub(group, f"{{{NML}}}LabelGroup", format_vlan_spans(ports[port]))
            labels.set("labeltype", f"{ETHERNET}#vlan")
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def discovery_document(domain: str, base_url: str, version: int) -> bytes:
    root = etree.Element(f"{{{DISCOVERY}}}nsa", nsmap={"nsa": DISCOVERY})
    root.set("id", f"urn:ogf:network:{domain}:nsa")
    root.set("version", timestamp(version))
    sub(root, "name", f"braid ({domain})")
    sub(root, "softwareVersion", "braid")
    sub(root, "startTime", timestamp(version))
    sub(root, "networkId", network_id(domain))
    for kind, href in (
        (PROVIDER_TYPE, f"{base_url}/NSI/services/CS2"),
        (TOPOLOGY_TYPE, f"{base_url}{topology_path(domain)}"),
    ):
        interface = sub(root, "interface")
        sub(interface, "type", kind)
        sub(interface, "href", href)
    sub(root, "feature", "").set("type", "vnd.ogf.nsi.cs.v2.role.uPA")
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
