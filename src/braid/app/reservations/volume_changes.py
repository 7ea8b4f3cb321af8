"""Changing a booked volume reservation: a modification, or a re-route around down links.

Both keep what the profile carried before `now` exactly as booked and plan
the rest anew (`core.volume.replan_remainder`) on a network holding every
other booking but not this reservation's own steps, which are put back
straight after: the mirror changes only once the store has taken the new
profile, and the store re-validates every step's loads against everyone
else's in the write's transaction, so no link is ever overbooked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from braid.app.errors import RejectedError
from braid.app.records import Reservation
from braid.app.reservations.commands import Modify, parse_objective
from braid.app.reservations.mirror import (
    Mirror,
    commit_all,
    held_bookings,
    label_paths,
    profile_links,
)
from braid.app.reservations.volumes import profile_of, profile_plan, shortfall_offers
from braid.core.errors import InputError
from braid.core.model.instants import format_instant, parse_instant
from braid.core.model.network import Network
from braid.core.model.units import format_volume, parse_bandwidth
from braid.core.volume import (
    BITS_PER_BYTE,
    Profile,
    VolumeAsk,
    VolumePlan,
    VolumeRefusal,
    moved_before,
    replan_remainder,
)

__all__ = ["changed_volume", "modified_volume", "relabel_volume", "replan_steps", "volume_ask_of"]


def volume_ask_of(r: Reservation, change: Modify | None = None) -> VolumeAsk:
    """The transfer a volume record asks for (its request echo), with `change` applied."""
    echo = r.request
    change = change or Modify()
    deadline = change.deadline
    if deadline is None and echo.get("deadline") is not None:
        deadline = parse_instant(echo["deadline"], "deadline")
    max_rate = change.max_rate
    if max_rate is None and echo.get("max_rate") is not None:
        max_rate = parse_bandwidth(echo["max_rate"], "max_rate")
    objective = change.objective or parse_objective(echo.get("objective", "earliest"))
    volume = int(echo["volume"]) if change.volume is None else change.volume
    return VolumeAsk(
        r.src,
        r.dst,
        volume * BITS_PER_BYTE,
        parse_instant(echo["not_before"], "not_before"),
        deadline,
        max_rate=max_rate,
        max_paths=int(echo["max_paths"]),
        objective=objective,
        symmetric=r.symmetric,
    )


def modified_volume(mirror: Mirror, r: Reservation, change: Modify, now: int) -> Reservation:
    """`r` as `change` makes it, its new labels noted in the mirror; RejectedError (with
    the most that moves by the deadline and when all of it would) if it does not fit."""
    if change.end is not None or change.bandwidth is not None:
        field = "end" if change.end is not None else "bandwidth"
        raise InputError(
            field,
            "a volume reservation ends when its volume has moved; "
            "change its 'deadline', 'volume', 'max_rate' or 'objective' instead",
        )
    ask = volume_ask_of(r, change)
    booked = _profile(r)
    _check_change(change, ask, booked, now)
    with mirror.lock:
        found = replan_steps(mirror.network, r, ask, now)
        if isinstance(found, VolumeRefusal):
            most = found.most_by_deadline // BITS_PER_BYTE
            offers = shortfall_offers(change.sent(), most, found.earliest_completion)
            raise RejectedError(found.reason, offers)
        labels = relabel_volume(mirror, r, found.profile)
        if isinstance(labels, str):
            raise RejectedError(labels)
    request = {**r.request, **change.sent()}
    return changed_volume(replace(r, request=request), found.profile, labels, now)


def _check_change(change: Modify, ask: VolumeAsk, booked: Profile, now: int) -> None:
    """Refuse, naming the field, a change no plan could meet."""
    start = max(now, ask.not_before)
    if change.deadline is not None and change.deadline <= start:
        raise InputError("deadline", f"must be after {format_instant(start)}")
    if ask.objective == "flattest" and ask.deadline is None:
        raise InputError("deadline", "required for objective flattest: the time to spread over")
    moved = sum(step.bits for step in moved_before(booked, now)) // BITS_PER_BYTE
    if change.volume is not None and change.volume <= moved:
        raise InputError(
            "volume",
            f"{format_volume(moved)} has moved already: ask for more, or cancel the reservation",
        )


def replan_steps(
    network: Network, r: Reservation, ask: VolumeAsk, now: int
) -> VolumePlan | VolumeRefusal:
    """`r`'s remainder planned anew on `network`, its own steps set aside meanwhile."""
    held = held_bookings(network, r.id)
    for booking in held:
        network.release(booking.id)
    try:
        return replan_remainder(network, ask, _profile(r), now)
    finally:
        commit_all(network, held)


def relabel_volume(mirror: Mirror, r: Reservation, profile: Profile) -> dict[str, list[int]] | str:
    """Labels for `profile`'s paths over its window, noted as taken: `r`'s own if the
    paths are the same and they stay free, else new ones (see `Mirror.relabel`)."""
    paths = profile_links(profile)
    window = (profile.start, profile.end)
    return mirror.relabel_paths(r, window, paths, paths == label_paths(r))


def changed_volume(
    r: Reservation, profile: Profile, labels: dict[str, list[int]], now: int
) -> Reservation:
    """`r` booking `profile` with `labels`, whole again (a new plan avoids the down links)."""
    plan: dict[str, Any] = {k: v for k, v in r.plan.items() if k != "degraded"}
    plan.update(profile_plan(profile, int(r.request["volume"])))
    plan.update(labels)
    return replace(r, start=profile.start, end=profile.end, plan=plan, updated_at=now)


def _profile(r: Reservation) -> Profile:
    profile = profile_of(r)
    if profile is None:
        raise ValueError(f"reservation {r.id!r} is not a volume")
    return profile
