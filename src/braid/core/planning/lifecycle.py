"""Reservation lifecycle: held -> reserved -> active -> finished, or cancelled/failed.

`active` and `finished` follow from the clock: a reserved booking is active
inside its window and finished after it; a hold that is neither confirmed nor
cancelled expires. The functions take `now`, so the rules stay pure.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from braid.core.errors import InputError


class State(StrEnum):
    HELD = "held"
    RESERVED = "reserved"
    ACTIVE = "active"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"
    EXPIRED = "expired"


# States whose bandwidth still counts against capacity.
BOOKED: Final = frozenset({State.HELD, State.RESERVED, State.ACTIVE})
FINAL: Final = frozenset({State.FINISHED, State.CANCELLED, State.FAILED, State.EXPIRED})

_ALLOWED: Final = {
    State.HELD: {State.RESERVED, State.CANCELLED, State.EXPIRED, State.FAILED},
    State.RESERVED: {State.ACTIVE, State.FINISHED, State.CANCELLED, State.FAILED},
    State.ACTIVE: {State.FINISHED, State.CANCELLED, State.FAILED},
}


def check_transition(old: State, new: State) -> None:
    """Raise when `old -> new` is not a lifecycle step (e.g. reviving a cancelled booking)."""
    if new not in _ALLOWED.get(old, set()):
        raise InputError("state", f"a {old.value} reservation cannot become {new.value}")


def state_at(
    stored: State, start: int, end: int, now: int, hold_expires_at: int | None = None
) -> State:
    """The state a stored reservation is in at `now`."""
    if stored == State.HELD:
        if hold_expires_at is not None and now >= hold_expires_at:
            return State.EXPIRED
        return State.HELD
    if stored in (State.RESERVED, State.ACTIVE):
        if now >= end:
            return State.FINISHED
        return State.ACTIVE if now >= start else State.RESERVED
    return stored


def counts_against_capacity(
    stored: State, end: int, now: int, hold_expires_at: int | None = None
) -> bool:
    """Whether the booking still takes bandwidth at or after `now`."""
    return state_at(stored, now - 1, end, now, hold_expires_at) in BOOKED


def transition_problem(old: State, new: State, hold_expires_at: int | None, now: int) -> str:
    """Why a stored state may not move from `old` to `new` (empty when it may).

    Besides the lifecycle's steps, a hold cannot be confirmed once it expired:
    other writers stopped counting it then.
    """
    try:
        check_transition(old, new)
    except InputError as error:
        return error.message
    confirming = old == State.HELD and new in (State.RESERVED, State.ACTIVE)
    if confirming and hold_expires_at is not None and now >= hold_expires_at:
        return f"the hold expired at {hold_expires_at}"
    return ""
