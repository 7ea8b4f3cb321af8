"""Which step of a volume reservation's profile the switches carry at a moment.

The rules of a profile change at each step's start and nowhere else. Before the
first step (the lead time) the switches get the first step's rules; in a gap
between two steps (no rate booked) they keep the next step's, installed early
like any lead, so nothing is torn down only to come back; after the last step
the last one's, until the reservation's end removes them.
"""

from __future__ import annotations

from braid.core.errors import InputError
from braid.core.model.paths import Path
from braid.core.rules.calendar import Assigned
from braid.core.volume.profile import Profile, Step

__all__ = ["profile_paths", "step_changes", "step_in_force", "step_labels"]


def step_in_force(profile: Profile, now: int) -> Step:
    """The step whose rules belong in the switches at `now`."""
    for step in profile.steps:
        if now < step.end:
            return step
    return profile.steps[-1]


def step_changes(profile: Profile) -> tuple[int, ...]:
    """The instants after the profile's start at which the rules in force change."""
    return tuple(step.start for step in profile.steps[1:])


def profile_paths(profile: Profile) -> tuple[Path, ...]:
    """Every path the profile uses, in the order they first appear: each gets one VLAN for
    the whole reservation, so a path kept from one step to the next keeps its label."""
    return tuple(dict.fromkeys(a.path for step in profile.steps for a in step.allocations))


def step_labels(profile: Profile, labels: Assigned, step: Step) -> Assigned:
    """The labels of `step`'s paths, out of the reservation's (one VLAN per profile path);
    the group ids are the reservation's, so a step change modifies its groups in place."""
    paths = profile_paths(profile)
    if len(labels.vlans) != len(paths):
        raise InputError(
            "vlans", f"{len(labels.vlans)} VLANs stored for a profile over {len(paths)} paths"
        )
    return Assigned(
        tuple(labels.vlans[paths.index(a.path)] for a in step.allocations), labels.group_ids
    )
