"""`sweep`: the notifications the clock causes — reserveTimeout, end time, forced end,
and data-plane changes — found by comparing each connection with braid's reservation."""

from __future__ import annotations

import uuid
from dataclasses import replace

from braid.app.nsi.messages import (
    DataPlaneStateChange,
    ErrorEvent,
    Header,
    Message,
    Outgoing,
    ReserveTimeout,
)
from braid.app.nsi.provider import NsiProvider
from braid.app.nsi.records import Connection
from braid.core.nsi.connection import apply, data_plane_active
from braid.core.nsi.states import Event, LifecycleState, ReservationState
from braid.core.planning.lifecycle import State

__all__ = ["sweep"]


def sweep(provider: NsiProvider) -> list[Outgoing]:
    """Move every connection the clock has moved, store it, and return the notifications."""
    sends: list[Outgoing] = []
    for seen in provider.all():
        if seen.states.lifecycle is LifecycleState.TERMINATED:
            continue
        with provider.lock:
            current = provider.connections.get(seen.id)
            if current is None:
                continue
            moved, messages = _news(provider, current)
            if moved != current:
                provider.connections.put(moved)
        if moved.reply_to:
            header = Header(
                "urn:uuid:" + str(uuid.uuid4()),
                moved.requester_nsa,
                provider.nsa,
                protocol_version="application/vnd.ogf.nsi.cs.v2.requester+soap",
            )
            sends.extend(Outgoing(moved.reply_to, header, m) for m in messages)
    return sends


def _news(provider: NsiProvider, c: Connection) -> tuple[Connection, list[Message]]:
    now = provider.service.clock()
    booking = provider.booking_state(c)
    messages: list[Message] = []

    def note(connection: Connection) -> Connection:
        return replace(connection, notification_id=connection.notification_id + 1)

    if c.states.reservation is ReservationState.HELD and booking is not State.HELD:
        c = note(replace(c, states=apply(c.states, Event.RESERVE_TIMEOUT_NT)))
        timeout = provider.service.hold_seconds
        messages.append(ReserveTimeout(c.id, c.notification_id, now, timeout, provider.nsa))
    alive = c.states.lifecycle is LifecycleState.CREATED
    if alive and c.states.provision is not None and booking in (State.CANCELLED, State.FAILED):
        c = note(replace(c, states=apply(c.states, Event.FORCED_END)))
        text = f"braid's reservation {c.id} is {booking.value}"
        messages.append(ErrorEvent(c.id, c.notification_id, now, "forcedEnd", provider.nsa, text))
    elif alive and now >= c.end:
        c = replace(c, states=apply(c.states, Event.END_TIME))
    active = data_plane_active(c.states, c.start, c.end, now)
    if active != c.data_plane_active:
        c = note(replace(c, data_plane_active=active))
        messages.append(DataPlaneStateChange(c.id, c.notification_id, now, active))
    return c, messages
