"""NSI messages as typed values: what the SOAP codec decodes and what it encodes.

Requests carry the `Header` they came with; replies and notifications go to
the header's `reply_to` with the same correlation id (notifications with a
fresh one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from braid.core.nsi.connection import ConnectionStates

__all__ = [
    "EVTS",
    "Confirmed",
    "Criteria",
    "DataPlaneStateChange",
    "ErrorEvent",
    "Failed",
    "GenericRequest",
    "Header",
    "Message",
    "Outgoing",
    "QueryRequest",
    "ReserveConfirmed",
    "ReserveRequest",
    "ReserveTimeout",
    "ServiceException",
    "Summary",
    "SummaryConfirmed",
]

EVTS: Final = "http://services.ogf.org/nsi/2013/12/descriptions/EVTS.A-GOLE"


@dataclass(frozen=True, slots=True)
class Header:
    correlation_id: str
    requester_nsa: str
    provider_nsa: str
    reply_to: str | None = None
    protocol_version: str = "application/vnd.ogf.nsi.cs.v2.provider+soap"


@dataclass(frozen=True, slots=True)
class Criteria:
    """A point-to-point service's criteria; instants in epoch seconds, capacity in Mbit/s."""

    version: int
    start: int | None
    end: int | None
    capacity: int
    source_stp: str
    dest_stp: str
    directionality: str = "Bidirectional"
    symmetric_path: bool = False
    service_type: str = EVTS


@dataclass(frozen=True, slots=True)
class ReserveRequest:
    header: Header
    connection_id: str | None
    global_reservation_id: str | None
    description: str | None
    criteria: Criteria


@dataclass(frozen=True, slots=True)
class GenericRequest:
    """reserveCommit, reserveAbort, provision, release or terminate (`operation`)."""

    header: Header
    operation: str
    connection_id: str


@dataclass(frozen=True, slots=True)
class QueryRequest:
    """querySummary, querySummarySync or queryRecursive: by ids, or all of the requester's."""

    header: Header
    operation: str
    connection_ids: tuple[str, ...] = ()
    global_reservation_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ServiceException:
    nsa_id: str
    error_id: str
    text: str
    connection_id: str | None = None


@dataclass(frozen=True, slots=True)
class Summary:
    """One connection as querySummary reports it."""

    connection_id: str
    global_reservation_id: str | None
    description: str | None
    criteria: Criteria
    requester_nsa: str
    states: ConnectionStates
    data_plane_active: bool
    notification_id: int


# -- what goes to the requester's replyTo ------------------------------------------


@dataclass(frozen=True, slots=True)
class ReserveConfirmed:
    connection_id: str
    global_reservation_id: str | None
    description: str | None
    criteria: Criteria


@dataclass(frozen=True, slots=True)
class Confirmed:
    """reserveCommitConfirmed, reserveAbortConfirmed, provisionConfirmed, ... (`operation`)."""

    operation: str
    connection_id: str


@dataclass(frozen=True, slots=True)
class Failed:
    """reserveFailed or reserveCommitFailed (`operation`), with the states after it."""

    operation: str
    connection_id: str
    states: ConnectionStates
    exception: ServiceException


@dataclass(frozen=True, slots=True)
class SummaryConfirmed:
    """querySummaryConfirmed (async), querySummarySyncConfirmed or queryRecursiveConfirmed."""

    operation: str
    reservations: tuple[Summary, ...]


@dataclass(frozen=True, slots=True)
class DataPlaneStateChange:
    connection_id: str
    notification_id: int
    time_stamp: int
    active: bool
    version: int = 0


@dataclass(frozen=True, slots=True)
class ReserveTimeout:
    connection_id: str
    notification_id: int
    time_stamp: int
    timeout_value: int
    originating_nsa: str


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    connection_id: str
    notification_id: int
    time_stamp: int
    event: str
    originating_nsa: str
    text: str


Message = (
    ReserveConfirmed
    | Confirmed
    | Failed
    | SummaryConfirmed
    | DataPlaneStateChange
    | ReserveTimeout
    | ErrorEvent
)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message for a requester: where to, under which header."""

    reply_to: str
    header: Header
    message: Message = field(hash=False)
