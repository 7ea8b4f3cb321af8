"""A volume request and its two answers: a plan (a rate profile) or a refusal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from braid.core.model.network import Network
from braid.core.volume.profile import Profile

__all__ = ["OBJECTIVES", "Objective", "VolumeAsk", "VolumePlan", "VolumeRefusal", "check_ask"]

Objective = Literal["earliest", "flattest"]
OBJECTIVES: Final = ("earliest", "flattest")


@dataclass(frozen=True, slots=True)
class VolumeAsk:
    """Move `bits` from src to dst, starting at `not_before`, done by `deadline`.

    `max_rate` caps the total rate at any instant (what the hosts can send);
    `max_paths` caps how many paths carry the transfer at any instant (the
    paths may change from one step to the next).
    """

    src: str
    dst: str
    bits: int
    not_before: int
    deadline: int | None
    max_rate: int | None = None
    max_paths: int = 16
    objective: Objective = "earliest"
    symmetric: bool = True


@dataclass(frozen=True, slots=True)
class VolumePlan:
    """The rate profile that moves the volume."""

    profile: Profile

    @property
    def completion(self) -> int:
        return self.profile.end


@dataclass(frozen=True, slots=True)
class VolumeRefusal:
    """Why the volume does not fit by the deadline, what does, and when all of it would."""

    reason: str
    most_by_deadline: int
    earliest_completion: int | None


def check_ask(network: Network, ask: VolumeAsk) -> None:
    """Refuse an ask no request parser should have let through (ValueError).

    The planner's parser says what is wrong with a user's input field by
    field; this guards the algorithm against a caller's mistake.
    """
    network.topology.require_node(ask.src, "src")
    network.topology.require_node(ask.dst, "dst")
    if ask.src == ask.dst:
        raise ValueError(f"a volume moves between two nodes, not from {ask.src!r} to itself")
    if not _whole(ask.bits) or ask.bits <= 0:
        raise ValueError(f"the volume must be a positive number of bits, got {ask.bits!r}")
    if not _whole(ask.not_before):
        raise ValueError(f"not_before must be an integer instant, got {ask.not_before!r}")
    if ask.deadline is not None and (not _whole(ask.deadline) or ask.deadline <= ask.not_before):
        raise ValueError(f"the deadline must come after not_before, got {ask.deadline!r}")
    if ask.max_rate is not None and (not _whole(ask.max_rate) or ask.max_rate <= 0):
        raise ValueError(f"max_rate must be a positive number of bit/s, got {ask.max_rate!r}")
    if not _whole(ask.max_paths) or ask.max_paths < 1:
        raise ValueError(f"max_paths must be at least 1, got {ask.max_paths!r}")
    if ask.objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, not {ask.objective!r}")
    if ask.objective == "flattest" and ask.deadline is None:
        raise ValueError("the flattest profile needs a deadline to spread the volume over")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
