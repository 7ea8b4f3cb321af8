"""NSI requests as a requester writes them (built with lxml), and hostile payloads:
for braid's NSI tests and the NSI bench."""

from __future__ import annotations

from lxml import etree

__all__ = ["LAUGHS", "XXE", "request"]

SOAP = "http://schemas.xmlsoap.org/soap/envelope/"
CTYPES = "http://schemas.ogf.org/nsi/2013/12/connection/types"
HEADERS = "http://schemas.ogf.org/nsi/2013/12/framework/headers"
P2PS = "http://schemas.ogf.org/nsi/2013/12/services/point2point"

# An external entity (XXE) and nested entity expansion ("billion laughs"): both need a DTD.
XXE = b"""<?xml version="1.0"?>
<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>&x;</soap:Body>
</soap:Envelope>"""
LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "lol">'
    + b"".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode() for i in range(8)
    )
    + b"]><soap:Envelope xmlns:soap='http://schemas.xmlsoap.org/soap/envelope/'>&i;</soap:Envelope>"
)


def request(
    operation: str,
    *,
    connection_id: str | None = None,
    source: str = "p1?vlan=1780",
    dest: str = "p3?vlan=1781",
    capacity: int = 100,
    start: str = "2030-01-01T02:00:00Z",
    end: str = "2030-01-01T03:00:00Z",
    domain: str = "braid.test",
    provider: str | None = None,
    requester: str = "urn:ogf:network:requester.test:nsa",
    reply_to: str = "http://127.0.0.1:1/NSI/services/RequesterService2",
    correlation_id: str = "urn:uuid:00000000-0000-0000-0000-000000000001",
) -> bytes:
    """A request envelope; `source` and `dest` are local STP ids of `domain`'s network."""
    root = etree.Element(f"{{{SOAP}}}Envelope", nsmap={"soap": SOAP, "ctypes": CTYPES})
    soap_header = etree.SubElement(root, f"{{{SOAP}}}Header")
    header = etree.SubElement(soap_header, f"{{{HEADERS}}}nsiHeader")
    for tag, text in (
        ("protocolVersion", "application/vnd.ogf.nsi.cs.v2.provider+soap"),
        ("correlationId", correlation_id),
        ("requesterNSA", requester),
        ("providerNSA", provider or f"urn:ogf:network:{domain}:nsa"),
        ("replyTo", reply_to),
    ):
        etree.SubElement(header, tag).text = text
    body = etree.SubElement(etree.SubElement(root, f"{{{SOAP}}}Body"), f"{{{CTYPES}}}{operation}")
    if connection_id is not None:
        etree.SubElement(body, "connectionId").text = connection_id
    if operation == "reserve":
        network = f"urn:ogf:network:{domain}:topology"
        criteria = etree.SubElement(body, "criteria", version="1")
        schedule = etree.SubElement(criteria, "schedule")
        etree.SubElement(schedule, "startTime").text = start
        etree.SubElement(schedule, "endTime").text = end
        etree.SubElement(criteria, "serviceType").text = "EVTS.A-GOLE"
        p2p = etree.SubElement(criteria, f"{{{P2PS}}}p2ps")
        for tag, text in (
            ("capacity", str(capacity)),
            ("directionality", "Bidirectional"),
            ("symmetricPath", "false"),
            ("sourceSTP", f"{network}:{source}"),
            ("destSTP", f"{network}:{dest}"),
        ):
            etree.SubElement(p2p, tag).text = text
    return bytes(etree.tostring(root))
