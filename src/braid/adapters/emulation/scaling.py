"""Rates as the seeds give them, scaled to what a small emulation host sustains."""

from __future__ import annotations

from dataclasses import dataclass

from braid.core.errors import InputError

MAX_LINK_MBPS = 1000.0  # Mininet's TCLink refuses faster htb rates


@dataclass(frozen=True, slots=True)
class Scale:
    """Emulated rate = seed rate x `factor`; braid books the emulated (scaled) rates."""

    factor: float

    def __post_init__(self) -> None:
        if not 0 < self.factor <= 10:
            raise InputError("scale", f"must lie in (0, 10], got {self.factor}")

    def bps(self, seed_bps: int) -> int:
        return round(seed_bps * self.factor)

    def note(self) -> str:
        return (
            f"rates scaled by {self.factor:g} from the seed's so that a 2-core host sustains "
            "them (Open vSwitch userspace datapath); reservations are booked at the scaled rates"
        )
