"""What holds a reservation to its rate on the wire: meters at the ingress edge, queues on
every hop.

A reservation's traffic enters the network through an entry rule on its
ingress switch; a `Meter` there counts it and, when the reservation is
`hard`-policed, discards what exceeds the booked rate (OpenFlow 1.3 meters
with one drop band). On every switch port a path of the reservation leaves
by, a `Queue` keeps that path's share apart from best effort: guaranteed
`min_rate`, allowed up to `max_rate` (the share itself for `hard`, the line
rate for `soft`, whose excess then competes as best effort and never ahead
of another reservation's guarantee). A queue's frames are recognised by the
path's VLAN, which is why the queue id is the VLAN id. Best effort takes the
rest of `line_rate`.

Rates here are bit/s (meters keep OpenFlow's kbit/s, rounded up).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError

__all__ = [
    "BRAID_METER_IDS",
    "METER_BURST_SECONDS",
    "Meter",
    "Policing",
    "Queue",
    "meter_kbps",
    "parse_policing",
]

BRAID_METER_IDS: Final = range(1, 0x1_0001)
"""Meter ids braid allocates from (one per select group); meters outside are left alone."""

METER_BURST_SECONDS: Final = 0.5
"""A meter's burst, in seconds of its rate. TCP through a policer alone with 0.1 s of
burst reached about half its rate on this project's test bed; the edge queue shapes
`hard` traffic to the rate, so the meter only has to catch what the shaper cannot
hold, without cutting a TCP window short."""


class Policing(enum.StrEnum):
    """What happens to a reservation's traffic above its booked rate."""

    SOFT = "soft"  # goes on as best effort
    HARD = "hard"  # discarded at the ingress edge


def parse_policing(value: object, field_name: str = "policing") -> Policing:
    """A policing named in input; the error lists the choices."""
    try:
        return Policing(str(value))
    except ValueError:
        raise InputError(field_name, f"must be 'soft' or 'hard', got {value!r}") from None


def meter_kbps(rate_bps: int) -> int:
    """A rate in OpenFlow meter units (kbit/s), rounded up so a meter never undercuts it."""
    return max(1, -(-rate_bps // 1000))


@dataclass(frozen=True, slots=True)
class Meter:
    """An OpenFlow 1.3 meter with one drop band at `rate_kbps`, `burst_kbits` deep."""

    meter_id: int
    rate_kbps: int
    burst_kbits: int

    def __post_init__(self) -> None:
        if self.meter_id not in BRAID_METER_IDS:
            raise InputError("meter.meter_id", f"must lie in 1..{BRAID_METER_IDS[-1]}")
        if self.rate_kbps <= 0 or self.burst_kbits <= 0:
            raise InputError("meter.rate_kbps", "rate and burst must be positive")


@dataclass(frozen=True, slots=True)
class Queue:
    """One path share's queue on the port `port` it leaves by; frames tagged `queue_id`."""

    port: int
    queue_id: int
    min_rate: int
    max_rate: int
    line_rate: int

    def __post_init__(self) -> None:
        if not 1 <= self.queue_id <= 4094:
            raise InputError("queue.queue_id", f"must be a VLAN id 1..4094, got {self.queue_id}")
        if not 0 < self.min_rate <= self.max_rate <= self.line_rate:
            raise InputError(
                "queue.min_rate",
                f"need 0 < min_rate <= max_rate <= line_rate, got "
                f"{self.min_rate}, {self.max_rate}, {self.line_rate}",
            )

    @property
    def key(self) -> tuple[int, int]:
        return (self.port, self.queue_id)

    @property
    def borrows(self) -> bool:
        """Whether traffic above the guarantee may go on (soft policing)."""
        return self.max_rate > self.min_rate
