"""A booking: bandwidth on one or more paths for a half-open window."""

from __future__ import annotations

from dataclasses import dataclass

from braid.core.model.paths import Path

__all__ = ["Allocation", "Booking"]


@dataclass(frozen=True, slots=True)
class Allocation:
    path: Path
    bandwidth: int


@dataclass(frozen=True, slots=True)
class Booking:
    """Bandwidth booked on one or more paths for [start, end)."""

    id: str
    start: int
    end: int
    allocations: tuple[Allocation, ...]
    symmetric: bool = True

    @property
    def bandwidth(self) -> int:
        return sum(a.bandwidth for a in self.allocations)
