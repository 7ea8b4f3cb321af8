"""What a modify's new version books while the old version still stands.

A modify is make-before-break: the new version is held beside the old one
until the coordinator decides. Holding both in full would refuse a modify
that only grows a reservation on a link it nearly fills, though the two
versions never carry traffic at once for long. So the new version is
*placed* as if the old one were gone, and only what it needs beyond the old
one is *booked* while both stand: on each link direction and at each
instant, the excess of the new load over the old (all of the new load
where the old one is not running). The old booking plus that excess covers
the new booking everywhere, so at Commit the new one takes the old one's
place without any chance of not fitting; at Abort only the excess goes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from braid.core.model.booking import Allocation, Booking
from braid.core.model.loads import Direction
from braid.core.model.paths import Path
from braid.core.model.topology import Topology

__all__ = ["excess_bookings"]


def excess_bookings(
    prefix: str,
    new: tuple[int, int, Mapping[Direction, int]],
    olds: Sequence[tuple[int, int, Mapping[Direction, int]]],
    topology: Topology,
) -> tuple[Booking, ...]:
    """The bookings (ids `<prefix>#x<k>`) that, beside the old versions', cover the new one.

    `new` and each of `olds` are a window and the load per link direction over
    it (several old versions: a volume's steps, each booked in full). One
    booking per stretch of the new window over which each old one is either
    running throughout or not at all; stretches needing nothing are left out.
    """
    start, end, loads = new
    edges = {t for old_start, old_end, _ in olds for t in (old_start, old_end)}
    cuts = sorted({start, end, *(t for t in edges if start < t < end)})
    out: list[Booking] = []
    for low, high in pairwise(cuts):
        running = [old for s, e, old in olds if s <= low and high <= e]
        excess = {
            key: load - sum(old.get(key, 0) for old in running) for key, load in loads.items()
        }
        allocations = tuple(
            Allocation(_one_link(topology, link, forward), amount)
            for (link, forward), amount in sorted(excess.items())
            if amount > 0
        )
        if allocations:
            # One way: the loads are given per direction already.
            out.append(Booking(f"{prefix}#x{len(out)}", low, high, allocations, symmetric=False))
    return tuple(out)


def _one_link(topology: Topology, link: str, forward: bool) -> Path:
    """The one-link path crossing `link` in the given direction."""
    spec = topology.links[link]
    return Path((spec.a, spec.b) if forward else (spec.b, spec.a), (link,))
