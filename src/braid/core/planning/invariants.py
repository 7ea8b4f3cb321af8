"""Invariant checkers shared by every query, allocator and test.

Each returns a list of violations (empty when all is well) so callers can
report them all at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from braid.core.model.booking import Allocation, Booking
from braid.core.model.loads import capacity_lookup, loads_of, peak_problems
from braid.core.model.network import Network
from braid.core.model.paths import path_problems
from braid.core.model.topology import Topology


def overbooking(network: Network) -> list[str]:
    """Recompute every link direction's usage from the bookings; report any excess.

    This deliberately ignores the timelines and sweeps the bookings themselves,
    so a bug in the timeline bookkeeping cannot hide itself.
    """
    loads = [load for b in network.bookings.values() for load in loads_of(b, network.topology)]
    return peak_problems(loads, capacity_lookup(network.topology))


def booking_problems(topology: Topology, booking: Booking, src: str, dst: str) -> list[str]:
    """Paths simple and connected src -> dst over existing links; positive shares."""
    problems = []
    if booking.start >= booking.end:
        problems.append(f"booking {booking.id} has an empty window")
    for allocation in booking.allocations:
        problems.extend(path_problems(topology, allocation.path, src, dst))
        if allocation.bandwidth <= 0:
            problems.append(f"booking {booking.id} has a non-positive share")
    return problems


def split_problems(allocations: Iterable[Allocation], granted: int) -> list[str]:
    total = sum(a.bandwidth for a in allocations)
    return [] if total == granted else [f"shares sum to {total}, granted {granted}"]
