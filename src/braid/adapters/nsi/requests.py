"""The requester's side of the codec: requests braid sends to an NSI provider, and the
provider's synchronous answers read back (reserveResponse, acknowledgment,
querySummarySyncConfirmed, or a SOAP fault with NSI's serviceException).

Built with the same lxml element writers as braid's replies (`soap`, `replies`)
and read with the same hardened parser and element readers.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

from braid.adapters.nsi.replies import soap_action, write_criteria
from braid.adapters.nsi.safe_xml import UnsafeXmlError, parse_xml
from braid.adapters.nsi.soap import (
    CTYPES,
    SOAP,
    envelope,
    read_criteria,
    required,
    sub,
    text_of,
)
from braid.app.nsi.messages import Criteria, Header, Summary
from braid.app.nsi.ports import ProviderError
from braid.core.nsi.connection import ConnectionStates
from braid.core.nsi.errors import NsiError
from braid.core.nsi.states import LifecycleState, ProvisionState, ReservationState

__all__ = [
    "Answer",
    "decode_answer",
    "generic_request",
    "query_request",
    "reserve_request",
]

Answer = str | None | list[Summary]  # a connection id, an acknowledgment, or summaries


def reserve_request(
    header: Header, global_id: str, description: str, criteria: Criteria
) -> tuple[str, bytes]:
    def fill(body: etree._Element) -> None:
        node = sub(body, f"{{{CTYPES}}}reserve")
        sub(node, "globalReservationId", global_id)
        sub(node, "description", description)
        write_criteria(node, criteria)

    return soap_action("reserve"), envelope(header, fill)


def generic_request(header: Header, operation: str, connection_id: str) -> tuple[str, bytes]:
    """reserveCommit, reserveAbort, provision, release or terminate of one connection."""

    def fill(body: etree._Element) -> None:
        sub(sub(body, f"{{{CTYPES}}}{operation}"), "connectionId", connection_id)

    return soap_action(operation), envelope(header, fill)


def query_request(header: Header, connection_ids: Sequence[str]) -> tuple[str, bytes]:
    """querySummarySync of those connections (none: every one of the requester's)."""

    def fill(body: etree._Element) -> None:
        node = sub(body, f"{{{CTYPES}}}querySummarySync")
        for connection_id in connection_ids:
            sub(node, "connectionId", connection_id)

    return soap_action("querySummarySync"), envelope(header, fill)


def decode_answer(data: bytes) -> Answer:
    """What the provider answered; ProviderError (reached) for a fault or a bad answer."""
    try:
        root = parse_xml(data)
        body = root.find(f"{{{SOAP}}}Body")
        if root.tag != f"{{{SOAP}}}Envelope" or body is None:
            raise ProviderError("the answer is not a SOAP envelope", reached=True)
        answer = next((child for child in body if isinstance(child.tag, str)), None)
        if answer is None:
            raise ProviderError("the answer's body is empty", reached=True)
        return _read(answer)
    except (UnsafeXmlError, NsiError, ValueError) as exc:
        if isinstance(exc, ProviderError):
            raise
        raise ProviderError(f"unreadable answer: {exc}", reached=True) from exc


def _read(answer: etree._Element) -> Answer:
    name = etree.QName(answer).localname
    if name == "Fault":
        raise _fault(answer)
    if name == "reserveResponse":
        return required(answer, "connectionId")
    if name == "acknowledgment":
        return None
    if name == "querySummarySyncConfirmed":
        return [_summary(node) for node in answer.findall("reservation")]
    raise ProviderError(f"unexpected answer {name}", reached=True)


def _fault(node: etree._Element) -> ProviderError:
    """The serviceException's errorId and text (wherever the provider nests it)."""
    found = {etree.QName(e).localname: (e.text or "").strip() for e in node.iter() if _named(e)}
    text = found.get("text") or found.get("faultstring") or "refused without a reason"
    return ProviderError(text, reached=True, error_id=found.get("errorId", ""))


def _named(element: etree._Element) -> bool:
    return isinstance(element.tag, str) and etree.QName(element).localname in (
        "errorId",
        "text",
        "faultstring",
    )


def _summary(node: etree._Element) -> Summary:
    states = node.find("connectionStates")
    if states is None:
        raise ProviderError("a reservation without connectionStates", reached=True)
    provision = text_of(states, "provisionState")
    status = states.find("dataPlaneStatus")
    active = status is not None and (text_of(status, "active") or "") == "true"
    return Summary(
        connection_id=required(node, "connectionId"),
        global_reservation_id=text_of(node, "globalReservationId"),
        description=text_of(node, "description"),
        criteria=read_criteria(_first(node, "criteria")),
        requester_nsa=text_of(node, "requesterNSA") or "",
        states=ConnectionStates(
            ReservationState(required(states, "reservationState")),
            None if provision is None else ProvisionState(provision),
            LifecycleState(required(states, "lifecycleState")),
        ),
        data_plane_active=active,
        notification_id=int(text_of(node, "notificationId") or 0),
    )


def _first(node: etree._Element, tag: str) -> etree._Element:
    found = node.find(tag)
    if found is None:
        raise ProviderError(f"a reservation without {tag}", reached=True)
    return found
