"""Skipping the starts a wall of full links refuses, exactly.

When no path carries `need` throughout [lo, lo + duration), the nodes src
reaches over hops with room are walled in: every hop leaving them lacks
room. Every path crosses that wall, and the one around dst, so no start is
feasible before some hop of each wall has room again: the earliest-start
search jumps there and looks again, a few times, before scanning every link.
A refused request is mostly walled in near one end by a few full links, so
a jump or two usually lands on the answer.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from braid.core.graph.sides import nearer_wall
from braid.core.model.network import Direction, Network
from braid.core.model.timeline import Timeline
from braid.core.model.topology import Hop

Row = tuple[Direction, ...]  # the link directions a booking over one hop loads

# Jumps tried, and hops of all their walls read, before the search falls
# back to scanning every link.
_JUMPS = 24
_WALL_HOPS = 96
# The first stretch of starts read on a wall's link; later ones grow fourfold.
_FIRST_STRETCH = 3600
# Later than any start: a row that never has room again.
_NEVER = 1 << 80


def skip_walls(
    network: Network,
    ends: tuple[str, str],
    need: int,
    duration: int,
    lo: int,
    stop: int | None,
    *,
    symmetric: bool = True,
    jumps: int = _JUMPS,
) -> tuple[int | None, bool]:
    """Jump over refused starts from `lo`: (start, True) settles the search.

    (start, True): `start` is the earliest feasible start from `lo` (None:
    there is none before `stop`, or ever). (start, False): none is feasible
    before `start`; the search goes on from there.
    """
    topology = network.topology
    spent = 0
    # Per row read so far: no start before this fits it (from the first lo on).
    known: dict[Row, int] = {}
    for _ in range(jumps):
        if stop is not None and lo >= stop:
            return None, True
        usable = network.window(lo, lo + duration, symmetric=symmetric).usable
        wall = nearer_wall(topology, ends, usable, need)
        if wall is None:
            return lo, True  # a path has room throughout
        rows = [_directions(network, hop, symmetric) for hop, _ in wall]
        room = _first_room(network, rows, need, duration, (lo, stop), known)
        if room is None:
            return None, True  # no hop of the wall has room again in time
        lo = room
        spent += len(wall)
        if spent > _WALL_HOPS:
            break  # wide walls: scanning every link at once costs less
    return lo, False


def _first_room(
    network: Network,
    rows: Sequence[Row],
    need: int,
    duration: int,
    starts: tuple[int, int | None],
    known: dict[Row, int],
) -> int | None:
    """The first start s >= lo (s < stop) at which some row has `need` free for `duration`.

    A row is the link directions a booking over one hop loads. Rows are read
    a stretch of starts at a time, all of them, so a row that stays full long
    is not read beyond the stretch in which another has room. `known` holds,
    per row read before from an earlier lo, a start before which none fits
    it: reading resumes there, and it is kept up to date.
    """
    lo, stop = starts
    timelines = network.timelines()
    rows = [row for row in rows if all(timelines[key].capacity >= need for key in row)]
    reached = [max(lo, known.get(row, lo)) for row in rows]  # per row: no start before fits
    until, stretch = lo, max(_FIRST_STRETCH, duration)
    while rows:
        until += stretch
        if stop is not None:
            until = min(until, stop)
        reached = _fits(network, rows, need, duration, reached, until)
        known.update(zip(rows, reached, strict=True))
        best = min(reached)
        if best < until:
            return best
        if best >= _NEVER or (stop is not None and until >= stop):
            return None
        stretch *= 4
    return None


def _fits(
    network: Network,
    rows: Sequence[Row],
    need: int,
    duration: int,
    starts: list[int],
    until: int,
) -> list[int]:
    """`_fit` of every row still short of `until`, from its start."""
    timelines = network.timelines()
    return [
        _fit([timelines[key] for key in row], need, duration, start, until)
        if start < until
        else start
        for row, start in zip(rows, starts, strict=True)
    ]


def _fit(row: Sequence[Timeline], need: int, duration: int, start: int, until: int) -> int:
    """The first start from `start` that fits every timeline of `row`, if before `until`.

    Else some start at or after `until` before which none fits (_NEVER: none ever).
    """
    while start < until:
        settled = True
        for timeline in row:
            fits = _fit_one(timeline, timeline.capacity - need, duration, start, until)
            if fits != start:
                start, settled = fits, False
        if settled:
            return start
    return start


def _fit_one(timeline: Timeline, limit: int, duration: int, start: int, until: int) -> int:
    """`_fit` on one timeline, booked at most `limit` throughout the start's duration.

    A piece above the limit within the start's duration refuses every start
    up to its end: the start moves past the last such piece at once. Only
    the pieces after it are read one by one, the others are read in C.
    """
    times, levels = timeline._times, timeline._levels
    count = len(times)
    i = bisect_right(times, start) - 1  # the piece holding at start (-1: before any)
    while start < until:
        if i >= 0 and levels[i] > limit:
            i += 1
        else:
            j = bisect_left(times, start + duration, i + 1)  # pieces i + 1 .. j - 1 lie within
            if j == i + 1 or max(levels[i + 1 : j]) <= limit:
                return start
            i = j - 1
            while levels[i] <= limit:
                i -= 1
            i += 1  # the piece after the last one above the limit
        if i == count:
            return _NEVER  # the last level holds for ever
        start = times[i]
    return start


def _directions(network: Network, hop: Hop, symmetric: bool) -> Row:
    """The link directions a booking over `hop` loads (one for both ways if they agree)."""
    if symmetric and network.one_way.get(hop.link):
        return ((hop.link, True), (hop.link, False))
    if symmetric:
        return ((hop.link, True),)
    return ((hop.link, hop.forward),)
