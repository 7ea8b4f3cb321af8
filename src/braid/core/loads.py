"""Loads: the bandwidth a booking puts on each link direction, and the peak check.

The same sweep checks a planned booking against a store's rows, and
recomputes usage from scratch in the invariant checkers, so admission and
audit agree on what "over capacity" means.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from braid.core.network import Booking
    from braid.core.topology import Topology

Direction = tuple[str, bool]  # link id, True for a -> b


@dataclass(frozen=True, slots=True)
class LinkLoad:
    """Bandwidth one booking puts on one link direction for [start, end)."""

    link: str
    forward: bool
    start: int
    end: int
    bandwidth: int

    @property
    def direction(self) -> Direction:
        return (self.link, self.forward)


def direction_loads(booking: Booking, topology: Topology) -> dict[Direction, int]:
    """What `booking` puts on each link direction (its paths may share links)."""
    out: dict[Direction, int] = defaultdict(int)
    for allocation in booking.allocations:
        for link, forward in allocation.path.directions(topology):
            out[(link, forward)] += allocation.bandwidth
            if booking.symmetric:
                out[(link, not forward)] += allocation.bandwidth
    return dict(out)


def loads_of(booking: Booking, topology: Topology) -> tuple[LinkLoad, ...]:
    return tuple(
        LinkLoad(link, forward, booking.start, booking.end, bandwidth)
        for (link, forward), bandwidth in sorted(direction_loads(booking, topology).items())
    )


def peak_problems(loads: Iterable[LinkLoad], capacity_of: Callable[[str], int | None]) -> list[str]:
    """Every link direction whose summed loads exceed its capacity at some instant."""
    events: dict[Direction, list[tuple[int, int]]] = defaultdict(list)
    for load in loads:
        events[load.direction].append((load.start, load.bandwidth))
        events[load.direction].append((load.end, -load.bandwidth))
    problems = []
    for (link, forward), changes in sorted(events.items()):
        capacity = capacity_of(link)
        if capacity is None:
            problems.append(f"link {link} is not in the topology")
            continue
        level = 0
        # Ends sort before starts at the same instant: windows are half-open.
        for instant, delta in sorted(changes):
            level += delta
            if level > capacity:
                side = "a->b" if forward else "b->a"
                problems.append(
                    f"link {link} {side} would carry {level} > {capacity} bit/s at {instant}"
                )
                break
    return problems


def capacity_lookup(topology: Topology) -> Callable[[str], int | None]:
    links: Mapping[str, int] = {link.id: link.capacity for link in topology.links.values()}
    return links.get
