"""The three state machines of an NSI CS 2.0 connection, as transition tables.

NSI (OGF GFD.237) gives every connection a reservation state machine (RSM),
a provision state machine (PSM, which exists only once a reservation has been
committed) and a lifecycle state machine (LSM). Each table maps
`(state, event) -> next state`; an event a state has no entry for is an
invalid transition (NSI error 00201). Pure: the adapters decide when an event
happens and apply what `step` returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final, TypeVar

from braid.core.errors import BraidError

__all__ = [
    "LIFECYCLE",
    "PROVISION",
    "RESERVATION",
    "Event",
    "InvalidTransitionError",
    "LifecycleState",
    "ProvisionState",
    "ReservationState",
    "step",
]


class ReservationState(StrEnum):
    START = "ReserveStart"
    CHECKING = "ReserveChecking"
    HELD = "ReserveHeld"
    COMMITTING = "ReserveCommitting"
    FAILED = "ReserveFailed"
    TIMEOUT = "ReserveTimeout"
    ABORTING = "ReserveAborting"


class ProvisionState(StrEnum):
    RELEASED = "Released"
    PROVISIONING = "Provisioning"
    PROVISIONED = "Provisioned"
    RELEASING = "Releasing"


class LifecycleState(StrEnum):
    CREATED = "Created"
    FAILED = "Failed"
    PASSED_END_TIME = "PassedEndTime"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"


class Event(StrEnum):
    """The primitives (`.rq` requests, `.cf` confirmations, `.fl` failures) and notifications."""

    RESERVE_RQ = "reserve.rq"
    RESERVE_CF = "reserve.cf"
    RESERVE_FL = "reserve.fl"
    RESERVE_COMMIT_RQ = "reserveCommit.rq"
    RESERVE_COMMIT_CF = "reserveCommit.cf"
    RESERVE_COMMIT_FL = "reserveCommit.fl"
    RESERVE_ABORT_RQ = "reserveAbort.rq"
    RESERVE_ABORT_CF = "reserveAbort.cf"
    RESERVE_TIMEOUT_NT = "reserveTimeout.nt"
    PROVISION_RQ = "provision.rq"
    PROVISION_CF = "provision.cf"
    RELEASE_RQ = "release.rq"
    RELEASE_CF = "release.cf"
    TERMINATE_RQ = "terminate.rq"
    TERMINATE_CF = "terminate.cf"
    END_TIME = "endTime.nt"
    FORCED_END = "forcedEnd.nt"


_R = ReservationState
_P = ProvisionState
_L = LifecycleState
_E = Event

# A committed (or aborted) reservation returns to ReserveStart, from which a
# new reserve modifies it; a commit after the hold timed out is accepted as a
# request and then fails (reserveCommit.fl), as the spec's RSM draws it.
RESERVATION: Final[Mapping[tuple[ReservationState, Event], ReservationState]] = {
    (_R.START, _E.RESERVE_RQ): _R.CHECKING,
    (_R.CHECKING, _E.RESERVE_CF): _R.HELD,
    (_R.CHECKING, _E.RESERVE_FL): _R.FAILED,
    (_R.HELD, _E.RESERVE_COMMIT_RQ): _R.COMMITTING,
    (_R.HELD, _E.RESERVE_ABORT_RQ): _R.ABORTING,
    (_R.HELD, _E.RESERVE_TIMEOUT_NT): _R.TIMEOUT,
    (_R.COMMITTING, _E.RESERVE_COMMIT_CF): _R.START,
    (_R.COMMITTING, _E.RESERVE_COMMIT_FL): _R.START,
    (_R.FAILED, _E.RESERVE_ABORT_RQ): _R.ABORTING,
    (_R.TIMEOUT, _E.RESERVE_ABORT_RQ): _R.ABORTING,
    (_R.TIMEOUT, _E.RESERVE_COMMIT_RQ): _R.COMMITTING,
    (_R.ABORTING, _E.RESERVE_ABORT_CF): _R.START,
}

PROVISION: Final[Mapping[tuple[ProvisionState, Event], ProvisionState]] = {
    (_P.RELEASED, _E.PROVISION_RQ): _P.PROVISIONING,
    (_P.PROVISIONING, _E.PROVISION_CF): _P.PROVISIONED,
    (_P.PROVISIONED, _E.RELEASE_RQ): _P.RELEASING,
    (_P.RELEASING, _E.RELEASE_CF): _P.RELEASED,
}

LIFECYCLE: Final[Mapping[tuple[LifecycleState, Event], LifecycleState]] = {
    (_L.CREATED, _E.TERMINATE_RQ): _L.TERMINATING,
    (_L.CREATED, _E.END_TIME): _L.PASSED_END_TIME,
    (_L.CREATED, _E.FORCED_END): _L.FAILED,
    (_L.FAILED, _E.TERMINATE_RQ): _L.TERMINATING,
    (_L.PASSED_END_TIME, _E.TERMINATE_RQ): _L.TERMINATING,
    (_L.TERMINATING, _E.TERMINATE_CF): _L.TERMINATED,
}


class InvalidTransitionError(BraidError):
    """An event the current state does not accept (NSI error 00201)."""

    def __init__(self, machine: str, state: StrEnum, event: Event) -> None:
        super().__init__(f"{event.value} is not allowed in {machine} state {state.value}")
        self.machine = machine
        self.state = state
        self.event = event


S = TypeVar("S", ReservationState, ProvisionState, LifecycleState)

_NAMES: Final = {
    id(RESERVATION): "reservation",
    id(PROVISION): "provision",
    id(LIFECYCLE): "lifecycle",
}


def step(table: Mapping[tuple[S, Event], S], state: S, event: Event) -> S:
    """The state `event` moves `state` to in `table`; raises InvalidTransitionError if none."""
    following = table.get((state, event))
    if following is None:
        raise InvalidTransitionError(_NAMES.get(id(table), "state"), state, event)
    return following
