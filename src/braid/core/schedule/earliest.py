"""Earliest start: the first instant from which some path carries `need` for `duration`."""

from __future__ import annotations

from braid.core.graph.reach import static_width
from braid.core.model.network import Network
from braid.core.model.units import FOREVER
from braid.core.schedule.all_slots import first_slot
from braid.core.schedule.fixed import fixed_path
from braid.core.schedule.walls import skip_walls

# The first chunk of start times searched; later chunks grow fourfold, so a
# far-off answer costs a few passes and a near one stays cheap.
_FIRST_CHUNK = 6 * 3600


def earliest_start(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    not_before: int,
    not_after: int | None = None,
    *,
    symmetric: bool = True,
    refused_at_start: bool = False,
) -> int | None:
    """The earliest start tau >= not_before (and tau + duration <= not_after), or None.

    `refused_at_start`: the caller's own fixed-slot search at `not_before`
    found no path, so it is not searched again (a refusal's alternatives).
    """
    if not_after is not None and not_before + duration > not_after:
        return None
    if src != dst and need > _endpoint_width(network, src, dst):
        return None  # wider than every link at one end, even with nothing booked
    # Most requests fit at once: one path search settles those.
    if src != dst and duration > 0 and not refused_at_start:
        end = not_before + duration
        if fixed_path(network, src, dst, need, not_before, end, symmetric=symmetric):
            return not_before
    if src != dst and need > static_width(network.topology, src, dst):
        return None  # wider than any path even with nothing booked
    lo = not_before
    stop = None if not_after is None else not_after - duration + 1
    chunk = max(_FIRST_CHUNK, 4 * duration)
    # Starts from `reach` on are never tried: the first chunk is searched
    # whole, and past it no later start than `last_useful_start` is needed.
    reach = max(not_before + chunk, FOREVER - duration + 1) if stop is None else stop
    if src != dst and duration > 0:
        start, settled = skip_walls(
            network, (src, dst), need, duration, lo, reach, symmetric=symmetric
        )
        if settled:
            return start
        assert start is not None
        lo = start
    # Most answers lie in the first chunk; where the bookings end (a look at
    # every link) is only worth finding out when they do not.
    while True:
        hi = min(reach if stop is None else stop, lo + chunk)
        if lo >= hi:
            return None
        first = first_slot(network, src, dst, need, duration, lo, hi, symmetric=symmetric)
        if first is not None:
            return first
        if stop is None:
            stop = max(hi, last_useful_start(network, duration, not_before, None))
        lo, chunk = hi, chunk * 4


def _endpoint_width(network: Network, src: str, dst: str) -> int:
    """The widest link at the narrower end: no path, booked or not, carries more."""
    topology = network.topology
    widths = [
        max((topology.links[hop.link].capacity for hop in topology.hops(node)), default=0)
        for node in (src, dst)
    ]
    return min(widths)


def last_useful_start(
    network: Network, duration: int, not_before: int, not_after: int | None
) -> int:
    """One past the last start worth trying.

    From the last breakpoint on, nothing changes any more, so a start there
    is as good as any later one.
    """
    if not_after is not None:
        return not_after - duration + 1
    last = network.last_change(FOREVER)
    settled = not_before if last is None else max(not_before, last)
    return min(settled + 1, FOREVER - duration + 1)
