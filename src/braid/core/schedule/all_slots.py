"""ALL-SLOTS: every start time at which some path carries `need` for `duration`.

A Bellman-Ford over the closed semiring of interval sets: a node's label is
the set of start times at which it is reachable from the source; crossing a
link intersects the label with the link's own feasible starts, and labels
meeting at a node are united. Labels only grow, so the search reaches a
fixed point.

Only what is new in a label is pushed on (semi-naive evaluation: intersection
distributes over union, so the fixed point is the same, but a span crosses a
hop once instead of once per round), nodes are expanded nearest-first, and
starts already known to reach the destination travel no further. The sets
are coded as bit sets over the window's cut points (see `slot_bits`), which
is exact and several times faster than lists of spans.
"""

from __future__ import annotations

from braid.core.model.intervals import IntervalSet
from braid.core.model.network import Network
from braid.core.schedule.slot_bits import all_slots_bits, first_slot_bits


def all_slots(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    symmetric: bool = True,
) -> IntervalSet:
    """Start instants s in [first_start, stop) such that [s, s + duration) fits `need`."""
    if src == dst or first_start >= stop or duration <= 0:
        return IntervalSet()
    return all_slots_bits(network, src, dst, need, duration, first_start, stop, symmetric=symmetric)


def first_slot(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    symmetric: bool = True,
) -> int | None:
    """The first start of `all_slots`, without the rest of the set.

    Starts later than the first one known to reach dst are dropped as the
    search goes, so little more than the answer's neighbourhood is worked out.
    """
    if src == dst or first_start >= stop or duration <= 0:
        return None
    return first_slot_bits(
        network, src, dst, need, duration, first_start, stop, symmetric=symmetric
    )
