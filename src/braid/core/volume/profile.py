"""A rate profile: the steps of a volume transfer, each a constant split over paths.

A volume reservation books a step function: within a step its rate on each
path is constant, and at a step boundary the rates (and the paths) may
change. Every step is itself a window booking, so every check and every
piece of the data path that reads bookings reads a profile step by step.
"""

from __future__ import annotations

from dataclasses import dataclass

from braid.core.model.booking import Allocation, Booking

__all__ = ["BITS_PER_BYTE", "Profile", "Step", "step_booking_id"]

BITS_PER_BYTE = 8


@dataclass(frozen=True, slots=True)
class Step:
    """Constant rates on up to k paths for [start, end)."""

    start: int
    end: int
    allocations: tuple[Allocation, ...]

    @property
    def rate(self) -> int:
        return sum(a.bandwidth for a in self.allocations)

    @property
    def bits(self) -> int:
        return self.rate * (self.end - self.start)


@dataclass(frozen=True, slots=True)
class Profile:
    """Steps in time order, non-overlapping (gaps allowed where nothing is sent)."""

    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("a profile has at least one step")
        for step in self.steps:
            if step.end <= step.start:
                raise ValueError(f"step [{step.start}, {step.end}) is empty")
        for before, after in zip(self.steps, self.steps[1:], strict=False):
            if after.start < before.end:
                raise ValueError(f"steps overlap at {after.start}")

    @property
    def start(self) -> int:
        return self.steps[0].start

    @property
    def end(self) -> int:
        return self.steps[-1].end

    @property
    def bits(self) -> int:
        return sum(step.bits for step in self.steps)

    @property
    def bytes(self) -> int:
        return self.bits // BITS_PER_BYTE

    @property
    def peak(self) -> int:
        return max(step.rate for step in self.steps)

    def bookings(self, reservation_id: str, *, symmetric: bool = True) -> tuple[Booking, ...]:
        """One window booking per step, named after the reservation and the step's index."""
        return tuple(
            Booking(
                step_booking_id(reservation_id, index), s.start, s.end, s.allocations, symmetric
            )
            for index, s in enumerate(self.steps)
        )


def step_booking_id(reservation_id: str, index: int) -> str:
    return f"{reservation_id}~{index}"
