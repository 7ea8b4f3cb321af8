"""Loads: the bandwidth a booking puts on each link direction, and the peak check.

The same sweep checks a planned booking against a store's rows, and
recomputes usage from scratch in the invariant checkers, so admission and
audit agree on what "over capacity" means.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from braid.core.model.booking import Booking
    from braid.core.model.topology import Topology

Direction = tuple[str, bool]  # link id, True for a -> b


class LinkLoad(NamedTuple):
    """Bandwidth one booking puts on one link direction for [start, end).

    A named tuple rather than a frozen dataclass: stores build one per row
    they read at every write, and a tuple is made several times faster.
    """

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
    """Every link direction whose summed loads exceed its capacity at some instant.

    For each, the first instant in time order at which it does, with the
    level reached there (ends count before starts at the same instant:
    windows are half-open).
    """
    by_direction: dict[Direction, list[LinkLoad]] = {}
    for load in loads:
        key = (load.link, load.forward)
        found = by_direction.get(key)
        if found is None:
            by_direction[key] = [load]
        else:
            found.append(load)
    problems = []
    for (link, forward), mine in sorted(by_direction.items()):
        capacity = capacity_of(link)
        if capacity is None:
            problems.append(f"link {link} is not in the topology")
            continue
        over = _first_over(mine, capacity)
        if over is not None:
            side = "a->b" if forward else "b->a"
            instant, level = over
            problems.append(
                f"link {link} {side} would carry {level} > {capacity} bit/s at {instant}"
            )
    return problems


def _first_over(loads: list[LinkLoad], capacity: int) -> tuple[int, int] | None:
    """The first (instant, level) of the sweep at which the level exceeds `capacity`, if any."""
    # The level never exceeds the sum of every rise: most directions stop here, unsorted.
    if sum([abs(load.bandwidth) for load in loads]) <= capacity:
        return None
    changes = [(load.start, load.bandwidth) for load in loads]
    changes += [(load.end, -load.bandwidth) for load in loads]
    changes.sort()  # by instant; at one instant, falls (negative) before rises
    level = 0
    for instant, delta in changes:
        level += delta
        if level > capacity:
            return instant, level
    return None


def capacity_lookup(topology: Topology) -> Callable[[str], int | None]:
    links: Mapping[str, int] = {link.id: link.capacity for link in topology.links.values()}
    return links.get
