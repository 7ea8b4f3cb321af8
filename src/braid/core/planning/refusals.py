"""Why the planner refused, as typed values: one class per kind of refusal, with its facts.

Bandwidths are bit/s, instants epoch seconds and nodes names, as everywhere
in `core`. Each kind says itself with `text(when)`, where `when` writes an
instant: `str` (epoch seconds) for the `braid plan` contract, ISO 8601 for
REST bodies and the CLI's table. No one reads a refusal's words back: what a
caller needs to know (the kind, an instant, an amount) is a field.

A split refusal's and a tenant's wording is kept where those facts are found
(`multipath.plan`, `tenants.allocator`), so each sentence is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from braid.core.model.units import format_bandwidth, human_duration
from braid.core.multipath.plan import capacity_reason, mdi_reason, where
from braid.core.tenants.allocator import shortfall_reason
from braid.core.tenants.model import TenantRequest

__all__ = [
    "DelayImbalance",
    "NoSinglePath",
    "NoStart",
    "NothingFree",
    "TenantShort",
    "TooLittle",
    "VolumeShort",
    "Why",
    "WriteInstant",
]

WriteInstant = Callable[[int], str]


@dataclass(frozen=True, slots=True)
class NoSinglePath:
    """A fixed request on one path: no single path has `bandwidth` free throughout [start, end)."""

    src: str
    dst: str
    bandwidth: int
    start: int
    end: int

    def text(self, when: WriteInstant = str) -> str:
        return (
            f"no single path has {format_bandwidth(self.bandwidth)} free between "
            f"{self.src} and {self.dst} throughout [{when(self.start)}, {when(self.end)})"
        )


@dataclass(frozen=True, slots=True)
class NoStart:
    """An earliest-start request: no start from `not_before` (ending by `not_after`) fits."""

    src: str
    dst: str
    bandwidth: int
    duration: int
    not_before: int
    not_after: int | None

    def text(self, when: WriteInstant = str) -> str:
        limit = f" ending by {when(self.not_after)}" if self.not_after is not None else ""
        return (
            f"no start from {when(self.not_before)}{limit} gives "
            f"{format_bandwidth(self.bandwidth)} for {human_duration(self.duration)} "
            f"between {self.src} and {self.dst}"
        )


@dataclass(frozen=True, slots=True)
class NothingFree:
    """A highest-bandwidth request: no bandwidth at all is free in [start, end)."""

    src: str
    dst: str
    start: int
    end: int

    def text(self, when: WriteInstant = str) -> str:
        return f"no bandwidth is free {where(self.src, self.dst, self.start, self.end, when)}"


@dataclass(frozen=True, slots=True)
class TooLittle:
    """A split request: only `best` of `need` fits over at most `max_paths` paths.

    `bound` is the max-flow bound between the ends in the window; 0 when
    nothing at all is free there.
    """

    src: str
    dst: str
    start: int
    end: int
    need: int
    best: int
    bound: int
    max_paths: int

    def text(self, when: WriteInstant = str) -> str:
        place = where(self.src, self.dst, self.start, self.end, when)
        return capacity_reason(place, self.need, self.best, self.bound, self.max_paths)


@dataclass(frozen=True, slots=True)
class DelayImbalance:
    """A packet-mode split request: paths could carry it, but their MDI `seen` is
    above the policy's `refuse_above`."""

    src: str
    dst: str
    start: int
    end: int
    need: int
    max_paths: int
    refuse_above: float
    seen: float

    def text(self, when: WriteInstant = str) -> str:
        place = where(self.src, self.dst, self.start, self.end, when)
        return mdi_reason(place, self.need, self.max_paths, self.refuse_above, self.seen)


@dataclass(frozen=True, slots=True)
class TenantShort:
    """A tenant request granted `granted` of `asked` in [start, end) (`end` may be
    `FOREVER`); `joined` is false when no main path joins the ends."""

    tenant: str
    src: str
    dst: str
    asked: int
    granted: int
    start: int
    end: int
    joined: bool

    def text(self, when: WriteInstant = str) -> str:
        asked = TenantRequest("", self.tenant, self.src, self.dst, self.asked, self.start, self.end)
        return shortfall_reason(asked, self.granted, joined=self.joined, when=when)


@dataclass(frozen=True, slots=True)
class VolumeShort:
    """A volume request: only `most_by_deadline` of `volume` bytes moves by the deadline
    (from `not_before` on, when there is none); all of it would by
    `earliest_completion`, or never (None). `said` is the volume planner's sentence,
    written with readable instants whatever `when` is, since it is built there."""

    src: str
    dst: str
    volume: int
    not_before: int
    deadline: int | None
    most_by_deadline: int
    earliest_completion: int | None
    said: str

    def text(self, when: WriteInstant = str) -> str:
        return self.said


Why = NoSinglePath | NoStart | NothingFree | TooLittle | DelayImbalance | TenantShort | VolumeShort
