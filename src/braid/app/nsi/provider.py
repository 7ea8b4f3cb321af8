"""`NsiProvider`: NSI CS 2.0 requests answered by braid's reservation service.

A reserve books through `ReservationService.reserve` as a hold (the one way
in: planning, policy and the store's capacity check all apply); the NSI
connection id is the reservation's id. reserveCommit confirms the hold,
reserveAbort and terminate cancel it, and a hold nobody commits expires in
braid as any hold does, which the sweep (`NsiSweep`) reports as
reserveTimeout. provision/release move only the NSI provision state: braid
carries a committed reservation's traffic in its window either way, and the
data plane is reported active when the connection is provisioned inside it.

Each call returns what the SOAP adapter answers at once and the messages it
must send to the requester's replyTo after answering.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import ClassVar

from braid.app.errors import NotFoundError, PolicyError, RejectedError
from braid.app.nsi.messages import (
    Confirmed,
    Criteria,
    DataPlaneStateChange,
    Failed,
    GenericRequest,
    Header,
    Message,
    Outgoing,
    QueryRequest,
    ReserveConfirmed,
    ReserveRequest,
    ServiceException,
    Summary,
    SummaryConfirmed,
)
from braid.app.nsi.ports import ConnectionStore
from braid.app.nsi.records import Connection
from braid.app.nsi.requesters import Requesters
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.service import ReservationService, new_id
from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.nsi.connection import ConnectionStates, apply, data_plane_active
from braid.core.nsi.errors import (
    CAPACITY_UNAVAILABLE,
    CONNECTION_NONEXISTENT,
    INVALID_TRANSITION,
    MISSING_PARAMETER,
    NO_PATH_FOUND,
    NOT_IMPLEMENTED,
    PAYLOAD_ERROR,
    UNAUTHORIZED,
    NsiError,
)
from braid.core.nsi.states import Event, InvalidTransitionError
from braid.core.nsi.stp import choose_vlan, edge_ports, format_stp, network_id, resolve_stp
from braid.core.planning.lifecycle import BOOKED, State

__all__ = ["Answer", "NsiProvider", "nsa_id"]


def nsa_id(domain: str) -> str:
    return f"urn:ogf:network:{domain}:nsa"


@dataclass(frozen=True, slots=True)
class Answer:
    """The synchronous reply (a connection id, a summary, or None for an acknowledgment)
    and the messages to send after it."""

    reply: str | SummaryConfirmed | None
    sends: tuple[Outgoing, ...] = ()


class NsiProvider:
    def __init__(
        self,
        service: ReservationService,
        connections: ConnectionStore,
        domain: str,
        requesters: Requesters | None = None,
    ) -> None:
        """`requesters`: who may act as which requester NSA, and where their confirmations
        may go; None takes any requester at its word (`--insecure`)."""
        self.service = service
        self.connections = connections
        self.domain = domain
        self.requesters = requesters
        self.nsa = nsa_id(domain)
        self.lock = threading.RLock()  # one change at a time: edge VLANs, connection versions

    @property
    def network(self) -> str:
        return network_id(self.domain)

    def admit_sender(self, certificate: str | None) -> None:
        """Refuse (00302) a sender without a listed client certificate, before its request
        is parsed: a stranger's XML is never read."""
        if self.requesters is not None:
            self.requesters.known(certificate)

    def admit(
        self, request: ReserveRequest | GenericRequest | QueryRequest, certificate: str | None
    ) -> None:
        """Refuse (00302) a sender whose client certificate (its subject, None without one)
        may not act as the request's requesterNSA, or a replyTo not registered for it:
        before anything is read, stored or sent."""
        if self.requesters is None:
            return
        replies = not (isinstance(request, QueryRequest) and request.operation.endswith("Sync"))
        self.requesters.check(request.header, certificate, replies)

    # -- reserve -------------------------------------------------------------------

    def reserve(self, request: ReserveRequest) -> Answer:
        self._check_header(request.header)
        if request.connection_id:
            raise NsiError(
                NOT_IMPLEMENTED, "connectionId", "modifying a reservation is not supported"
            )
        now = self.service.clock()
        criteria = request.criteria
        start, end = _window(criteria, now)
        with self.lock:
            ports = edge_ports(self.service.topology)
            src = resolve_stp(criteria.source_stp, self.domain, ports, "sourceSTP")
            dst = resolve_stp(criteria.dest_stp, self.domain, ports, "destSTP")
            if src.port == dst.port:
                raise NsiError(PAYLOAD_ERROR, "destSTP", "must be another port than sourceSTP")
            taken = self._vlans_taken(start, end)
            vlans = (
                choose_vlan(src, ports[src.port], taken.get(src.port, ()), "sourceSTP"),
                choose_vlan(dst, ports[dst.port], taken.get(dst.port, ()), "destSTP"),
            )
            connection = Connection(
                id=new_id(),
                requester_nsa=request.header.requester_nsa,
                reply_to=request.header.reply_to,
                global_reservation_id=request.global_reservation_id,
                description=request.description,
                # What is granted: the window as booked, the VLAN chosen at each end.
                criteria=replace(
                    criteria,
                    start=start,
                    end=end,
                    source_stp=format_stp(self.domain, src.port, vlans[0]),
                    dest_stp=format_stp(self.domain, dst.port, vlans[1]),
                ),
                ports=(src.port, dst.port),
                vlans=vlans,
                states=apply(ConnectionStates(), Event.RESERVE_RQ),
                booked=False,
                start=start,
                end=end,
            )
            return self._book(connection, request.header)

    def _book(self, connection: Connection, header: Header) -> Answer:
        body = {
            "src": connection.ports[0],
            "dst": connection.ports[1],
            "bandwidth": connection.criteria.capacity,
            "start": format_instant(connection.start),
            "end": format_instant(connection.end),
        }
        user = _user(connection)
        try:
            self.service.reserve(user, Reserve(body, hold=True, id=connection.id))
        except InputError as exc:  # nothing stored: the request itself is at fault
            raise NsiError(PAYLOAD_ERROR, _nsi_field(exc.field), exc.message) from exc
        except (RejectedError, PolicyError) as exc:
            code = NO_PATH_FOUND if "no path" in str(exc) else CAPACITY_UNAVAILABLE
            failed = replace(connection, states=apply(connection.states, Event.RESERVE_FL))
            stored = self.connections.put(failed)
            problem = ServiceException(self.nsa, code, str(exc), stored.id)
            message = Failed("reserveFailed", stored.id, stored.states, problem)
            return Answer(stored.id, self._to(stored, header, message))
        held = replace(connection, booked=True, states=apply(connection.states, Event.RESERVE_CF))
        stored = self.connections.put(held)
        c = stored
        confirmed = ReserveConfirmed(c.id, c.global_reservation_id, c.description, c.criteria)
        return Answer(stored.id, self._to(stored, header, confirmed))

    def _vlans_taken(self, start: int, end: int) -> dict[str, list[int]]:
        """VLANs held at each port by live connections overlapping [start, end)."""
        taken: dict[str, list[int]] = {}
        for c in self.connections.all():
            if c.booked and c.start < end and start < c.end and self._live(c):
                for port, vlan in zip(c.ports, c.vlans, strict=True):
                    taken.setdefault(port, []).append(vlan)
        return taken

    def _live(self, c: Connection) -> bool:
        return self.booking_state(c) in BOOKED

    # -- commit, abort, provision, release, terminate -----------------------------------

    def generic(self, request: GenericRequest) -> Answer:
        self._check_header(request.header)
        handler = self._HANDLERS.get(request.operation)
        if handler is None:
            raise NsiError(NOT_IMPLEMENTED, "", f"{request.operation} is not supported")
        with self._connection(request) as connection:
            return handler(self, connection, request.header)

    def _commit(self, c: Connection, header: Header) -> Answer:
        c = self._moved(c, Event.RESERVE_COMMIT_RQ)
        try:
            self.service.confirm(_user(c), c.id)
        except (RejectedError, InputError, NotFoundError) as exc:
            c = self._moved(c, Event.RESERVE_COMMIT_FL)
            problem = ServiceException(self.nsa, CAPACITY_UNAVAILABLE, str(exc), c.id)
            failed = Failed("reserveCommitFailed", c.id, c.states, problem)
            return Answer(None, self._to(self.connections.put(c), header, failed))
        c = self._moved(c, Event.RESERVE_COMMIT_CF)
        return self._confirm(c, header, "reserveCommitConfirmed")

    def _abort(self, c: Connection, header: Header) -> Answer:
        c = self._moved(c, Event.RESERVE_ABORT_RQ)
        self._cancel(c)
        c = replace(self._moved(c, Event.RESERVE_ABORT_CF), booked=False)
        return self._confirm(c, header, "reserveAbortConfirmed")

    def _provision(self, c: Connection, header: Header) -> Answer:
        c = self._moved(self._moved(c, Event.PROVISION_RQ), Event.PROVISION_CF)
        return self._confirm(c, header, "provisionConfirmed")

    def _release(self, c: Connection, header: Header) -> Answer:
        c = self._moved(self._moved(c, Event.RELEASE_RQ), Event.RELEASE_CF)
        return self._confirm(c, header, "releaseConfirmed")

    def _terminate(self, c: Connection, header: Header) -> Answer:
        c = self._moved(c, Event.TERMINATE_RQ)
        self._cancel(c)
        c = replace(self._moved(c, Event.TERMINATE_CF), booked=False)
        return self._confirm(c, header, "terminateConfirmed")

    _HANDLERS: ClassVar[dict[str, Callable[[NsiProvider, Connection, Header], Answer]]] = {
        "reserveCommit": _commit,
        "reserveAbort": _abort,
        "provision": _provision,
        "release": _release,
        "terminate": _terminate,
    }

    def _confirm(self, c: Connection, header: Header, operation: str) -> Answer:
        """Store `c`, confirm `operation`, and tell of a data plane that changed with it."""
        now = self.service.clock()
        active = data_plane_active(c.states, c.start, c.end, now)
        messages: list[Message] = [Confirmed(operation, c.id)]
        if active != c.data_plane_active:
            c = replace(c, data_plane_active=active, notification_id=c.notification_id + 1)
            messages.append(DataPlaneStateChange(c.id, c.notification_id, now, active))
        stored = self.connections.put(c)
        sends = tuple(o for m in messages for o in self._to(stored, header, m))
        return Answer(None, sends)

    def _cancel(self, c: Connection) -> None:
        """Cancel braid's reservation for `c` if it still takes bandwidth."""
        if c.booked and self._live(c):
            self.service.cancel(_user(c), c.id)

    def _moved(self, c: Connection, event: Event) -> Connection:
        try:
            return replace(c, states=apply(c.states, event))
        except InvalidTransitionError as exc:
            raise NsiError(INVALID_TRANSITION, "connectionId", str(exc)) from exc

    @contextmanager
    def _connection(self, request: GenericRequest) -> Iterator[Connection]:
        with self.lock:
            found = self.connections.get(request.connection_id)
            if found is None or found.requester_nsa != request.header.requester_nsa:
                raise NsiError(
                    CONNECTION_NONEXISTENT,
                    "connectionId",
                    f"no connection {request.connection_id!r}",
                )
            yield found

    # -- queries ---------------------------------------------------------------------

    def query(self, request: QueryRequest) -> Answer:
        self._check_header(request.header)
        summaries = tuple(self.summary(c) for c in self._matching(request))
        operation = {
            "querySummary": "querySummaryConfirmed",
            "querySummarySync": "querySummarySyncConfirmed",
            "queryRecursive": "queryRecursiveConfirmed",
        }[request.operation]
        result = SummaryConfirmed(operation, summaries)
        if request.operation == "querySummarySync":
            return Answer(result)
        if not request.header.reply_to:
            raise NsiError(MISSING_PARAMETER, "replyTo", "an asynchronous query needs a replyTo")
        return Answer(
            None, (Outgoing(request.header.reply_to, _reply_header(request.header), result),)
        )

    def _matching(self, request: QueryRequest) -> list[Connection]:
        mine = [
            c for c in self.connections.all() if c.requester_nsa == request.header.requester_nsa
        ]
        if request.connection_ids or request.global_reservation_ids:
            ids, globals_ = set(request.connection_ids), set(request.global_reservation_ids)
            mine = [c for c in mine if c.id in ids or c.global_reservation_id in globals_]
        return sorted(mine, key=lambda c: (c.start, c.id))

    def summary(self, c: Connection) -> Summary:
        return Summary(
            c.id,
            c.global_reservation_id,
            c.description,
            c.criteria,
            c.requester_nsa,
            c.states,
            c.data_plane_active,
            c.notification_id,
        )

    # -- shared ----------------------------------------------------------------------------

    def booking_state(self, c: Connection) -> State | None:
        """braid's state of the reservation behind `c` now, or None if there is none."""
        if not c.booked:
            return None
        try:
            return self.service.get(_user(c), c.id).state
        except NotFoundError:
            return None

    def all(self) -> Sequence[Connection]:
        return self.connections.all()

    def _check_header(self, header: Header) -> None:
        if header.provider_nsa != self.nsa:
            raise NsiError(
                UNAUTHORIZED,
                "providerNSA",
                f"this provider is {self.nsa}, not {header.provider_nsa!r}",
            )

    def _to(self, c: Connection, header: Header, message: Message) -> tuple[Outgoing, ...]:
        reply_to = header.reply_to or c.reply_to
        return (Outgoing(reply_to, _reply_header(header), message),) if reply_to else ()


def _reply_header(header: Header) -> Header:
    return replace(
        header, reply_to=None, protocol_version="application/vnd.ogf.nsi.cs.v2.requester+soap"
    )


def _user(c: Connection) -> User:
    """Each requester NSA books as its own braid user: policy and quotas apply per requester."""
    return User("nsi:" + c.requester_nsa, "user")


def _window(criteria: Criteria, now: int) -> tuple[int, int]:
    """The schedule, a missing or past start meaning now; a missing end is refused."""
    if criteria.end is None:
        raise NsiError(MISSING_PARAMETER, "schedule.endTime", "this provider needs an end time")
    start = now if criteria.start is None or criteria.start < now else criteria.start
    if criteria.end <= start:
        raise NsiError(PAYLOAD_ERROR, "schedule.endTime", "must be after the start time (and now)")
    return start, criteria.end


def _nsi_field(field: str) -> str:
    return {"bandwidth": "capacity", "src": "sourceSTP", "dst": "destSTP"}.get(field, field)
