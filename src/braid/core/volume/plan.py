"""Plan a volume transfer: the earliest or the flattest rate profile, or a refusal.

With no storage inside the network, a transfer's time-expanded network
falls apart into independent pieces of time (see `sweep`): what moves in
one piece is at most that piece's best rate times its length, and the best
rates of all pieces can be had at once. So the most that moves by T is the
sum of those products, and the earliest completion is where that running
sum first reaches the volume.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from braid.core.model.booking import Allocation
from braid.core.model.instants import readable_instant
from braid.core.model.network import Network
from braid.core.model.units import format_volume
from braid.core.volume.ask import VolumeAsk, VolumePlan, VolumeRefusal, check_ask
from braid.core.volume.peak import lowest_peak
from braid.core.volume.profile import BITS_PER_BYTE, Profile, Step
from braid.core.volume.rates import Rate, Rates, capped
from braid.core.volume.sweep import FOREVER, Sweep

__all__ = ["append_step", "plan_volume", "quickest_transfer", "rated_pieces", "refusal"]

Rated = tuple[int, int, Rate]  # [start, end) carried at one rate


def rated_pieces(network: Network, ask: VolumeAsk) -> Iterator[Rated]:
    """Every piece of time from `not_before` on with its best rate, split at the deadline.

    The last piece ends at FOREVER: past every booking, nothing changes.
    """
    free: dict[str | tuple[str, bool], int] = {}
    rates = Rates(network, ask, free)
    sweep = Sweep(network, rates.links, ask.not_before, ask.symmetric)
    sweep.free = free  # the sweep updates what the rates read
    deadline = ask.deadline
    for start, end, changed in sweep.pieces():
        rate = rates.rate(start, end, changed)
        if deadline is not None and start < deadline < end:
            yield start, deadline, rate
            yield deadline, end, rate
        else:
            yield start, end, rate


def plan_volume(network: Network, ask: VolumeAsk) -> VolumePlan | VolumeRefusal:
    """The profile moving `ask.bits` by the deadline that the objective prefers, or why not.

    Raises ValueError on an ask no parser should let through.
    """
    check_ask(network, ask)
    pieces = rated_pieces(network, ask)
    if ask.objective == "flattest":
        return _flattest(network, ask, pieces)
    return _earliest(network, ask, pieces)


def quickest_transfer(network: Network, ask: VolumeAsk) -> VolumePlan | None:
    """The earliest-completing profile whatever the deadline (None: it never completes)."""
    quickest = replace(ask, deadline=None, objective="earliest")
    check_ask(network, quickest)
    found = _earliest(network, quickest, rated_pieces(network, quickest))
    return found if isinstance(found, VolumePlan) else None


def _earliest(
    network: Network, ask: VolumeAsk, pieces: Iterator[Rated]
) -> VolumePlan | VolumeRefusal:
    """Every piece at its best rate until the running sum reaches the volume."""
    steps: list[Step] = []
    moved = 0
    for start, end, rate in pieces:
        if ask.deadline is not None and start >= ask.deadline:
            return refusal(ask, moved, _completion(ask, moved, (start, end, rate), pieces))
        if rate.total <= 0:
            continue
        left = ask.bits - moved
        if rate.total * (end - start) >= left:
            append_step(steps, start, start + _ceiling(left, rate.total), rate.allocations)
            return VolumePlan(_checked(network, ask, steps))
        append_step(steps, start, end, rate.allocations)
        moved += rate.total * (end - start)
    return refusal(ask, moved, None)  # the last piece, to FOREVER, carries nothing


def _completion(ask: VolumeAsk, moved: int, first: Rated, pieces: Iterator[Rated]) -> int | None:
    """When the volume would be done going on past the deadline, from piece `first` on."""
    for start, end, rate in _chain(first, pieces):
        left = ask.bits - moved
        if rate.total > 0 and rate.total * (end - start) >= left:
            done = start + _ceiling(left, rate.total)
            return done if done < FOREVER else None
        moved += rate.total * (end - start)
    return None


def _flattest(
    network: Network, ask: VolumeAsk, pieces: Iterator[Rated]
) -> VolumePlan | VolumeRefusal:
    """The lowest peak R that moves the volume by the deadline; each piece carries min(rate, R)."""
    assert ask.deadline is not None  # checked by `check_ask`
    by_deadline: list[Rated] = []
    for start, end, rate in pieces:
        if start >= ask.deadline:
            moved = sum(r.total * (b - a) for a, b, r in by_deadline)
            if moved < ask.bits:
                return refusal(ask, moved, _completion(ask, moved, (start, end, rate), pieces))
            break
        by_deadline.append((start, end, rate))
    peak = lowest_peak([(r.total, b - a) for a, b, r in by_deadline], ask.bits)
    assert peak is not None  # the pieces move the volume at their full rates
    steps: list[Step] = []
    moved = 0
    for start, end, rate in by_deadline:
        carried = capped(((a.path, a.bandwidth) for a in rate.allocations), peak)
        total = sum(a.bandwidth for a in carried)
        if total <= 0:
            continue
        left = ask.bits - moved
        if total * (end - start) >= left:
            append_step(steps, start, start + _ceiling(left, total), carried)
            break
        append_step(steps, start, end, carried)
        moved += total * (end - start)
    return VolumePlan(_checked(network, ask, steps))


def append_step(
    steps: list[Step], start: int, end: int, allocations: tuple[Allocation, ...]
) -> None:
    """Append a step, merged into the previous one when it follows on with the same rates."""
    if steps and steps[-1].end == start and steps[-1].allocations == allocations:
        steps[-1] = Step(steps[-1].start, end, allocations)
    else:
        steps.append(Step(start, end, allocations))


def _checked(network: Network, ask: VolumeAsk, steps: list[Step]) -> Profile:
    """The profile, once every step is known to fit the timelines (a bug if one does not)."""
    profile = Profile(tuple(steps))
    for step in profile.bookings("volume-check", symmetric=ask.symmetric):
        short = network.shortfall(step)
        if short:
            (link, _), missing = short[0]
            raise RuntimeError(f"volume profile overbooks link {link} by {missing} bit/s")
    return profile


def refusal(
    ask: VolumeAsk, moved: int, completion: int | None, *, already: int = 0
) -> VolumeRefusal:
    """Why `ask` does not fit: `moved` bits is the most by the deadline, `already` of them
    moved before the transfer was planned again (a modification, a re-route)."""
    asked, most = format_volume(ask.bits // BITS_PER_BYTE), format_volume(moved // BITS_PER_BYTE)
    begin = readable_instant(ask.not_before)
    if ask.deadline is not None:
        window = f"from {begin} to the deadline {readable_instant(ask.deadline)}"
    else:
        window = f"from {begin} on"
    said = f"only {most} of the {asked} asked can be moved from {ask.src} to {ask.dst} {window}"
    if already:
        said += f" ({format_volume(already // BITS_PER_BYTE)} of it moved already)"
    if completion is not None:
        said += f"; all of it could be moved by {readable_instant(completion)}"
    else:
        said += (
            "; it can never all be moved: what is booked leaves nothing free between them for good"
        )
    return VolumeRefusal(said, moved, completion)


def _ceiling(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _chain(first: Rated, rest: Iterator[Rated]) -> Iterator[Rated]:
    yield first
    yield from rest
