"""Plan again what is left of a booked volume transfer, keeping what already moved.

A modification (a new deadline, volume, rate cap or objective) and a
re-route around a down link both change a transfer under way. What the
profile carried before `now` is history: those steps stay exactly as
booked (a step in force at `now` is cut there). The bits still to move are
planned from `now` (or the transfer's `not_before`, if later) to the
deadline like a new transfer, on a network that no longer holds the
reservation's own steps, so its future bandwidth counts as free for it.
"""

from __future__ import annotations

from dataclasses import replace

from braid.core.model.network import Network
from braid.core.volume.ask import VolumeAsk, VolumePlan, VolumeRefusal
from braid.core.volume.plan import append_step, plan_volume, quickest_transfer, refusal
from braid.core.volume.profile import Profile, Step

__all__ = ["moved_before", "replan_remainder"]


def moved_before(profile: Profile, now: int) -> tuple[Step, ...]:
    """The part of `profile` before `now`: whole steps, and the one in force cut at `now`."""
    kept: list[Step] = []
    for step in profile.steps:
        if step.start >= now:
            break
        kept.append(step if step.end <= now else Step(step.start, now, step.allocations))
    return tuple(kept)


def replan_remainder(
    network: Network, ask: VolumeAsk, booked: Profile, now: int
) -> VolumePlan | VolumeRefusal:
    """`ask` (the whole transfer as now wanted) with `booked`'s past kept, the rest planned anew.

    `network` must not hold `booked`'s steps. The answer's profile starts
    with the kept steps; a refusal counts them in what can move by the
    deadline. Raises ValueError, as `plan_volume` does, on an ask no parser
    should let through.
    """
    kept = moved_before(booked, now)
    done = sum(step.bits for step in kept)
    if ask.bits <= done:
        return VolumePlan(Profile(kept))  # nothing is left to move
    rest = replace(ask, bits=ask.bits - done, not_before=max(ask.not_before, now))
    if ask.deadline is not None and ask.deadline <= rest.not_before:
        quickest = quickest_transfer(network, rest)
        completion = None if quickest is None else quickest.completion
        return refusal(ask, done, completion, already=done)
    found = plan_volume(network, rest)
    if isinstance(found, VolumeRefusal):
        most = done + found.most_by_deadline
        return refusal(ask, most, found.earliest_completion, already=done)
    steps = list(kept)
    for step in found.profile.steps:
        append_step(steps, step.start, step.end, step.allocations)
    return VolumePlan(Profile(tuple(steps)))
