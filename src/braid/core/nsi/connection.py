"""One NSI connection's three states together, and the rules that tie the machines.

Each machine alone is a table (`states`); together they obey three more rules
of the spec: the provision machine exists only once a reservation has been
committed; a connection that is terminating or terminated takes no request
but its termination's confirmation; one that failed or passed its end time
takes only `terminate`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from braid.core.nsi.states import (
    LIFECYCLE,
    PROVISION,
    RESERVATION,
    Event,
    InvalidTransitionError,
    LifecycleState,
    ProvisionState,
    ReservationState,
    step,
)

__all__ = ["ConnectionStates", "apply", "data_plane_active"]

_RESERVATION_EVENTS: Final = frozenset(e for _, e in RESERVATION)
_PROVISION_EVENTS: Final = frozenset(e for _, e in PROVISION)


@dataclass(frozen=True, slots=True)
class ConnectionStates:
    reservation: ReservationState = ReservationState.START
    provision: ProvisionState | None = None  # None until the first commit
    lifecycle: LifecycleState = LifecycleState.CREATED


def apply(states: ConnectionStates, event: Event) -> ConnectionStates:
    """The states after `event`; raises InvalidTransitionError when it is not allowed."""
    if states.lifecycle is not LifecycleState.CREATED and event not in _lifecycle_events():
        raise InvalidTransitionError("lifecycle", states.lifecycle, event)
    if event in _RESERVATION_EVENTS:
        reservation = step(RESERVATION, states.reservation, event)
        committed = event is Event.RESERVE_COMMIT_CF and states.provision is None
        provision = ProvisionState.RELEASED if committed else states.provision
        return replace(states, reservation=reservation, provision=provision)
    if event in _PROVISION_EVENTS:
        if states.provision is None:
            raise InvalidTransitionError("provision", states.reservation, event)
        return replace(states, provision=step(PROVISION, states.provision, event))
    return replace(states, lifecycle=step(LIFECYCLE, states.lifecycle, event))


def _lifecycle_events() -> frozenset[Event]:
    return frozenset(e for _, e in LIFECYCLE)


def data_plane_active(states: ConnectionStates, start: int, end: int, now: int) -> bool:
    """Whether the data plane carries traffic: provisioned, alive, inside its window."""
    provisioned = states.provision is ProvisionState.PROVISIONED
    alive = states.lifecycle is LifecycleState.CREATED
    return provisioned and alive and start <= now < end
