"""When a reservation's rules belong in the switches: from `lead` seconds before its start
until its end, while it is booked (a hold is not provisioned until it is confirmed).

A volume reservation's rates and paths change at its profile's steps: its rules
are wanted throughout, but they change at each step's start, so those instants
are changes too (`Window.steps`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from braid.core.planning.lifecycle import State, state_at

__all__ = ["Window", "next_change", "wanted"]


@dataclass(frozen=True, slots=True)
class Window:
    """What decides whether a reservation is in the switches at a moment."""

    state: State  # as stored
    start: int
    end: int
    hold_expires_at: int | None = None
    # Instants inside [start, end) at which the rules change (a profile's step starts).
    steps: tuple[int, ...] = ()


def wanted(w: Window, now: int, lead: int) -> bool:
    """Should the reservation's rules be in the switches at `now`?"""
    if now >= w.end or now < w.start - lead:
        return False
    return state_at(w.state, w.start, w.end, now, w.hold_expires_at) in (
        State.RESERVED,
        State.ACTIVE,
    )


def next_change(windows: Iterable[Window], now: int, lead: int) -> int | None:
    """The first instant after `now` at which `wanted` may change for one of `windows`."""
    upcoming = [
        t
        for w in windows
        for t in (w.start - lead, w.end, w.hold_expires_at, *w.steps)
        if t is not None and t > now
    ]
    return min(upcoming, default=None)
