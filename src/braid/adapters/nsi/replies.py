"""braid's NSI replies, confirmations and notifications as SOAP envelopes, with their SOAPAction."""

from __future__ import annotations

from functools import singledispatch
from typing import Final

from lxml import etree

from braid.adapters.nsi.soap import CTYPES, P2PS, envelope, sub, timestamp, write_exception
from braid.app.nsi.messages import (
    Confirmed,
    Criteria,
    DataPlaneStateChange,
    ErrorEvent,
    Failed,
    Header,
    Message,
    ReserveConfirmed,
    ReserveTimeout,
    Summary,
    SummaryConfirmed,
)
from braid.core.nsi.connection import ConnectionStates
from braid.core.nsi.states import ProvisionState

__all__ = [
    "ACTION",
    "acknowledgment",
    "encode",
    "reserve_response",
    "soap_action",
    "write_criteria",
]

ACTION: Final = "http://schemas.ogf.org/nsi/2013/12/connection/service/"


def soap_action(operation: str) -> str:
    return f'"{ACTION}{operation}"'


def reserve_response(header: Header, connection_id: str) -> bytes:
    def fill(body: etree._Element) -> None:
        sub(sub(body, f"{{{CTYPES}}}reserveResponse"), "connectionId", connection_id)

    return envelope(header, fill)


def acknowledgment(header: Header) -> bytes:
    def fill(body: etree._Element) -> None:
        sub(body, f"{{{CTYPES}}}acknowledgment")

    return envelope(header, fill)


def encode(header: Header, message: Message) -> tuple[str, bytes]:
    """The SOAPAction and envelope of `message` under `header`."""
    operation = _operation(message)
    return soap_action(operation), envelope(header, lambda body: _write(message, body))


def _operation(message: Message) -> str:
    if isinstance(message, Confirmed | Failed | SummaryConfirmed):
        return message.operation
    names: dict[type, str] = {
        ReserveConfirmed: "reserveConfirmed",
        DataPlaneStateChange: "dataPlaneStateChange",
        ReserveTimeout: "reserveTimeout",
        ErrorEvent: "errorEvent",
    }
    return names[type(message)]


@singledispatch
def _write(message: object, body: etree._Element) -> None:
    raise TypeError(f"no SOAP encoding for {message!r}")


@_write.register
def _(message: ReserveConfirmed, body: etree._Element) -> None:
    node = sub(body, f"{{{CTYPES}}}reserveConfirmed")
    sub(node, "connectionId", message.connection_id)
    _described(node, message.global_reservation_id, message.description)
    write_criteria(node, message.criteria)


@_write.register
def _(message: Confirmed, body: etree._Element) -> None:
    sub(sub(body, f"{{{CTYPES}}}{message.operation}"), "connectionId", message.connection_id)


@_write.register
def _(message: Failed, body: etree._Element) -> None:
    node = sub(body, f"{{{CTYPES}}}{message.operation}")
    sub(node, "connectionId", message.connection_id)
    _states(node, message.states, active=False)
    problem = message.exception
    exception = sub(node, "serviceException")
    write_exception(
        exception, problem.nsa_id, problem.error_id, problem.text, problem.connection_id
    )


@_write.register
def _(message: SummaryConfirmed, body: etree._Element) -> None:
    node = sub(body, f"{{{CTYPES}}}{message.operation}")
    for summary in message.reservations:
        _summary(sub(node, "reservation"), summary)


@_write.register
def _(message: DataPlaneStateChange, body: etree._Element) -> None:
    node = _notification(body, "dataPlaneStateChange", message.connection_id, message)
    status = sub(node, "dataPlaneStatus")
    sub(status, "active", _bool(message.active))
    sub(status, "version", str(message.version))
    sub(status, "versionConsistent", "true")


@_write.register
def _(message: ReserveTimeout, body: etree._Element) -> None:
    node = _notification(body, "reserveTimeout", message.connection_id, message)
    sub(node, "timeoutValue", str(message.timeout_value))
    sub(node, "originatingConnectionId", message.connection_id)
    sub(node, "originatingNSA", message.originating_nsa)


@_write.register
def _(message: ErrorEvent, body: etree._Element) -> None:
    node = _notification(body, "errorEvent", message.connection_id, message)
    sub(node, "event", message.event)
    sub(node, "originatingConnectionId", message.connection_id)
    sub(node, "originatingNSA", message.originating_nsa)
    info = sub(node, "additionalInfo")
    attribute = sub(info, "attribute", None)
    attribute.set("type", "text")
    sub(attribute, "value", message.text)


def _notification(
    body: etree._Element,
    name: str,
    connection_id: str,
    message: DataPlaneStateChange | ReserveTimeout | ErrorEvent,
) -> etree._Element:
    node = sub(body, f"{{{CTYPES}}}{name}")
    sub(node, "connectionId", connection_id)
    sub(node, "notificationId", str(message.notification_id))
    sub(node, "timeStamp", timestamp(message.time_stamp))
    return node


def _summary(node: etree._Element, summary: Summary) -> None:
    sub(node, "connectionId", summary.connection_id)
    _described(node, summary.global_reservation_id, summary.description)
    write_criteria(node, summary.criteria, children=True)
    sub(node, "requesterNSA", summary.requester_nsa)
    _states(node, summary.states, active=summary.data_plane_active)
    sub(node, "notificationId", str(summary.notification_id))


def _described(node: etree._Element, global_id: str | None, description: str | None) -> None:
    if global_id:
        sub(node, "globalReservationId", global_id)
    if description:
        sub(node, "description", description)


def write_criteria(parent: etree._Element, criteria: Criteria, *, children: bool = False) -> None:
    node = sub(parent, "criteria")
    node.set("version", str(criteria.version))
    schedule = sub(node, "schedule")
    if criteria.start is not None:
        sub(schedule, "startTime", timestamp(criteria.start))
    if criteria.end is not None:
        sub(schedule, "endTime", timestamp(criteria.end))
    sub(node, "serviceType", criteria.service_type)
    if children:
        sub(node, "children")
    p2p = sub(node, f"{{{P2PS}}}p2ps")
    sub(p2p, "capacity", str(criteria.capacity))
    sub(p2p, "directionality", criteria.directionality)
    sub(p2p, "symmetricPath", _bool(criteria.symmetric_path))
    sub(p2p, "sourceSTP", criteria.source_stp)
    sub(p2p, "destSTP", criteria.dest_stp)


def _states(parent: etree._Element, states: ConnectionStates, *, active: bool) -> None:
    node = sub(parent, "connectionStates")
    sub(node, "reservationState", states.reservation.value)
    # Before the first commit there is no provision machine yet; requesters
    # (OpenNSA's among them) expect a provisionState all the same, and read
    # Released as "not provisioned", which is what it is.
    sub(node, "provisionState", (states.provision or ProvisionState.RELEASED).value)
    sub(node, "lifecycleState", states.lifecycle.value)
    status = sub(node, "dataPlaneStatus")
    sub(status, "active", _bool(active))
    sub(status, "version", "0")
    sub(status, "versionConsistent", "true")


def _bool(value: bool) -> str:
    return "true" if value else "false"
