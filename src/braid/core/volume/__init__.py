"""Volume transfers: bytes to move by a deadline, answered as a rate profile over time."""

from braid.core.volume.ask import OBJECTIVES, Objective, VolumeAsk, VolumePlan, VolumeRefusal
from braid.core.volume.peak import lowest_peak
from braid.core.volume.plan import plan_volume, quickest_transfer
from braid.core.volume.profile import BITS_PER_BYTE, Profile, Step
from braid.core.volume.remainder import moved_before, replan_remainder

__all__ = [
    "BITS_PER_BYTE",
    "OBJECTIVES",
    "Objective",
    "Profile",
    "Step",
    "VolumeAsk",
    "VolumePlan",
    "VolumeRefusal",
    "lowest_peak",
    "moved_before",
    "plan_volume",
    "quickest_transfer",
    "replan_remainder",
]
