"""Which step of a volume reservation's profile the switches carry at a moment.

The rules of a profile change at each step's start and nowhere else. Before the
first step (the lead time) the switches get the first step's rules; in a gap
between two steps (no rate booked) they keep the next step's, installed early
like any lead, so nothing is torn down only to come back; after the last step
the last one's, until the reservation's end removes them.
"""

from __future__ import annotations

from braid.core.volume.profile import Profile, Step

__all__ = ["step_changes", "step_in_force"]


def step_in_force(profile: Profile, now: int) -> Step:
    """The step whose rules belong in the switches at `now`."""
    for step in profile.steps:
        if now < step.end:
            return step
    return profile.steps[-1]


def step_changes(profile: Profile) -> tuple[int, ...]:
    """The instants after the profile's start at which the rules in force change."""
    return tuple(step.start for step in profile.steps[1:])
