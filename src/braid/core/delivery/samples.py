"""One direction's cumulative counters, from the raw counters of its flows and meter."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Final

from braid.core.delivery.flows import CountedDirection, FlowRef
from braid.core.errors import InputError

__all__ = ["VLAN_TAG_BYTES", "DeliverySample", "PacketsBytes", "Tally", "tally_of"]

VLAN_TAG_BYTES: Final = 4
"""What the path label adds to a frame: an egress rule counts frames before it pops it.
(Across Open vSwitch patch ports one datapath pass credits every rule with the frame as
it entered, untagged, so there delivered reads 4 bytes a frame low; over wires it is exact.)"""

PacketsBytes = tuple[int, int]
"""A flow's or a meter band's counters as a switch keeps them: (packets, bytes)."""


@dataclass(frozen=True, slots=True)
class Tally:
    """Cumulative packets and bytes of one direction: offered, delivered, dropped by policing."""

    offered_packets: int = 0
    offered_bytes: int = 0
    delivered_packets: int = 0
    delivered_bytes: int = 0
    dropped_packets: int = 0
    dropped_bytes: int = 0

    def __post_init__(self) -> None:
        _check_counts(self)


@dataclass(frozen=True, slots=True)
class DeliverySample:
    """One direction's cumulative counters as read at `at` (unix seconds)."""

    at: int
    offered_bytes: int = 0
    delivered_bytes: int = 0
    dropped_bytes: int = 0
    offered_packets: int = 0
    delivered_packets: int = 0
    dropped_packets: int = 0

    def __post_init__(self) -> None:
        _check_counts(self)

    @staticmethod
    def of(at: int, tally: Tally) -> DeliverySample:
        return DeliverySample(
            at,
            tally.offered_bytes,
            tally.delivered_bytes,
            tally.dropped_bytes,
            tally.offered_packets,
            tally.delivered_packets,
            tally.dropped_packets,
        )


def _check_counts(value: Tally | DeliverySample) -> None:
    for f in fields(value):
        if f.name != "at" and getattr(value, f.name) < 0:
            raise InputError(f.name, f"a counter cannot be negative, got {getattr(value, f.name)}")


def tally_of(
    direction: CountedDirection,
    flows: Mapping[FlowRef, PacketsBytes],
    meters: Mapping[tuple[str, int], PacketsBytes],
) -> Tally:
    """The direction's tally from its flows' counters and its meter's band counters.

    Delivered bytes leave out the VLAN tag the egress rule still saw, so
    that they compare with the offered bytes, counted before the tag was
    pushed. Every flow (and the meter, if any) must have counters.
    """
    missing = [ref for ref in direction.flows if ref not in flows]
    if missing:
        raise InputError("counters", f"no counters for flow {missing[0]}")
    offered = flows[direction.entry]
    packets = sum(flows[ref][0] for ref in direction.egress)
    tagged = sum(flows[ref][1] for ref in direction.egress)
    dropped: PacketsBytes = (0, 0)
    if direction.meter is not None:
        if direction.meter not in meters:
            raise InputError("counters", f"no counters for meter {direction.meter}")
        dropped = meters[direction.meter]
    return Tally(
        offered[0],
        offered[1],
        packets,
        max(0, tagged - VLAN_TAG_BYTES * packets),
        dropped[0],
        dropped[1],
    )
