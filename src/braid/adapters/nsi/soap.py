"""NSI CS 2.0 SOAP messages <-> braid's typed values (`braid.app.nsi.messages`).

Requests are read from a tree the hardened parser built (`safe_xml`); every
message is written with lxml's element API, never by pasting strings. A
request that cannot be read raises NsiError naming the element at fault, and
`fault` turns any NsiError into the SOAP fault NSI expects (a
serviceException with the errorId).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from lxml import etree

from braid.adapters.nsi.safe_xml import UnsafeXmlError, parse_xml
from braid.app.nsi.messages import (
    Criteria,
    GenericRequest,
    Header,
    QueryRequest,
    ReserveRequest,
)
from braid.core.errors import InputError
from braid.core.model.instants import parse_instant
from braid.core.nsi.errors import MISSING_PARAMETER, NOT_IMPLEMENTED, PAYLOAD_ERROR, NsiError

__all__ = [
    "CTYPES",
    "FTYPES",
    "HEADERS",
    "P2PS",
    "SOAP",
    "Request",
    "decode_request",
    "envelope",
    "fault",
    "read_criteria",
    "required",
    "sub",
    "text_of",
    "timestamp",
]

SOAP: Final = "http://schemas.xmlsoap.org/soap/envelope/"
CTYPES: Final = "http://schemas.ogf.org/nsi/2013/12/connection/types"
HEADERS: Final = "http://schemas.ogf.org/nsi/2013/12/framework/headers"
FTYPES: Final = "http://schemas.ogf.org/nsi/2013/12/framework/types"
P2PS: Final = "http://schemas.ogf.org/nsi/2013/12/services/point2point"
NSMAP: Final = {"soap": SOAP, "ctypes": CTYPES, "header": HEADERS, "p2psrv": P2PS, "ftypes": FTYPES}

GENERIC: Final = ("reserveCommit", "reserveAbort", "provision", "release", "terminate")
QUERIES: Final = ("querySummary", "querySummarySync", "queryRecursive")

Request = ReserveRequest | GenericRequest | QueryRequest


# -- reading -------------------------------------------------------------------------


def decode_request(data: bytes) -> Request:
    """The request in a SOAP envelope; NsiError (00100 and kin) says what is wrong."""
    try:
        root = parse_xml(data)
    except UnsafeXmlError as exc:
        raise NsiError(PAYLOAD_ERROR, "", str(exc)) from exc
    if root.tag != f"{{{SOAP}}}Envelope":
        raise NsiError(PAYLOAD_ERROR, "Envelope", "the document is not a SOAP 1.1 envelope")
    header = _header(root)
    body = _one(root, f"{{{SOAP}}}Body", "Body")
    operations = [child for child in body if isinstance(child.tag, str)]
    if len(operations) != 1 or etree.QName(operations[0]).namespace != CTYPES:
        raise NsiError(PAYLOAD_ERROR, "Body", "the body must hold one NSI connection request")
    operation = operations[0]
    name = etree.QName(operation).localname
    if name == "reserve":
        return _reserve(header, operation)
    if name in GENERIC:
        return GenericRequest(header, name, required(operation, "connectionId"))
    if name in QUERIES:
        ids = tuple(_texts(operation, "connectionId"))
        return QueryRequest(header, name, ids, tuple(_texts(operation, "globalReservationId")))
    raise NsiError(NOT_IMPLEMENTED, name, f"{name} is not supported by this provider")


def _header(root: etree._Element) -> Header:
    soap_header = _one(root, f"{{{SOAP}}}Header", "Header")
    nsi = _one(soap_header, f"{{{HEADERS}}}nsiHeader", "nsiHeader")
    return Header(
        correlation_id=required(nsi, "correlationId"),
        requester_nsa=required(nsi, "requesterNSA"),
        provider_nsa=required(nsi, "providerNSA"),
        reply_to=text_of(nsi, "replyTo"),
        protocol_version=text_of(nsi, "protocolVersion") or "",
    )


def _reserve(header: Header, operation: etree._Element) -> ReserveRequest:
    return ReserveRequest(
        header=header,
        connection_id=text_of(operation, "connectionId"),
        global_reservation_id=text_of(operation, "globalReservationId"),
        description=text_of(operation, "description"),
        criteria=read_criteria(_one(operation, "criteria", "criteria")),
    )


def read_criteria(criteria: etree._Element) -> Criteria:
    """A point-to-point `criteria` element (of a reserve, or of a provider's summary)."""
    schedule = criteria.find("schedule")
    p2p = _one(criteria, f"{{{P2PS}}}p2ps", "p2ps")
    return Criteria(
        version=_integer(criteria.get("version", "0"), "criteria.version"),
        start=_instant(schedule, "startTime"),
        end=_instant(schedule, "endTime"),
        capacity=_integer(required(p2p, "capacity"), "capacity"),
        source_stp=required(p2p, "sourceSTP"),
        dest_stp=required(p2p, "destSTP"),
        directionality=text_of(p2p, "directionality") or "Bidirectional",
        symmetric_path=(text_of(p2p, "symmetricPath") or "false").lower() == "true",
        service_type=text_of(criteria, "serviceType") or "",
    )


def _one(parent: etree._Element, tag: str, name: str) -> etree._Element:
    found = parent.find(tag)
    if found is None:
        raise NsiError(MISSING_PARAMETER, name, f"the message has no {name}")
    return found


def text_of(parent: etree._Element, tag: str) -> str | None:
    found = parent.find(tag)
    if found is None or found.text is None or not found.text.strip():
        return None
    return found.text.strip()


def required(parent: etree._Element, tag: str) -> str:
    value = text_of(parent, tag)
    if value is None:
        raise NsiError(MISSING_PARAMETER, tag, f"{tag} is required")
    return value


def _texts(parent: etree._Element, tag: str) -> list[str]:
    return [e.text.strip() for e in parent.findall(tag) if e.text and e.text.strip()]


def _integer(value: str, field: str) -> int:
    try:
        number = int(value)
    except ValueError as exc:
        raise NsiError(PAYLOAD_ERROR, field, f"must be a whole number, not {value!r}") from exc
    if number < 0:
        raise NsiError(PAYLOAD_ERROR, field, "must not be negative")
    return number


def _instant(schedule: etree._Element | None, tag: str) -> int | None:
    value = None if schedule is None else text_of(schedule, tag)
    if value is None:
        return None
    # xsd:dateTime may leave out the offset; NSI means UTC then.
    if not (value.endswith("Z") or "+" in value[10:] or "-" in value[10:]):
        value += "Z"
    try:
        return parse_instant(value, f"schedule.{tag}")
    except InputError as exc:
        raise NsiError(PAYLOAD_ERROR, exc.field, exc.message) from exc


# -- writing ---------------------------------------------------------------------------


def sub(parent: etree._Element, tag: str, text: str | None = None) -> etree._Element:
    element = etree.SubElement(parent, tag)
    if text is not None:
        element.text = text
    return element


def timestamp(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def envelope(header: Header | None, fill: Callable[[etree._Element], None]) -> bytes:
    """A SOAP envelope with `header` (if any), its body filled in by `fill`."""
    root = etree.Element(f"{{{SOAP}}}Envelope", nsmap=NSMAP)
    soap_header = sub(root, f"{{{SOAP}}}Header")
    if header is not None:
        nsi = sub(soap_header, f"{{{HEADERS}}}nsiHeader")
        sub(nsi, "protocolVersion", header.protocol_version)
        sub(nsi, "correlationId", header.correlation_id)
        sub(nsi, "requesterNSA", header.requester_nsa)
        sub(nsi, "providerNSA", header.provider_nsa)
        if header.reply_to:
            sub(nsi, "replyTo", header.reply_to)
    fill(sub(root, f"{{{SOAP}}}Body"))
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def fault(nsa: str, error: NsiError, connection_id: str | None = None) -> bytes:
    """The SOAP fault for `error`: faultstring and a serviceException with NSI's errorId."""

    def fill(body: etree._Element) -> None:
        node = sub(body, f"{{{SOAP}}}Fault")
        client = error.code.startswith("001")
        sub(node, "faultcode", "soap:Client" if client else "soap:Server")
        sub(node, "faultstring", str(error))
        detail = sub(node, "detail")
        exception = sub(detail, f"{{{FTYPES}}}serviceException")
        write_exception(exception, nsa, error.code, str(error), connection_id)

    return envelope(None, fill)


def write_exception(
    node: etree._Element, nsa: str, code: str, text: str, connection_id: str | None
) -> None:
    sub(node, "nsaId", nsa)
    if connection_id:
        sub(node, "connectionId", connection_id)
    sub(node, "errorId", code)
    sub(node, "text", text)
