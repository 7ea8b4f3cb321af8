"""Booked bandwidth of one link direction as a step function of time.

The level on [times[i], times[i+1]) is levels[i]; before the first breakpoint
it is zero. Bookings add and subtract exact integers, so two identical
bookings that start at the same second are simply counted twice.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from braid.core.model.intervals import IntervalSet, Span

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Ints = NDArray[np.int64]

Step = tuple[int, int, int]  # start, end, booked bit/s


class OverbookingError(RuntimeError):
    """Raised when a change would take a link above its capacity (a bug upstream)."""


class Timeline:
    """Booked bandwidth over time on one direction of one link."""

    __slots__ = ("_arrays", "_drops", "_levels", "_padded", "_times", "capacity")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._times: list[int] = []
        self._levels: list[int] = []
        self._arrays: tuple[Ints, Ints] | None = None
        self._drops: Ints | None = None
        self._padded: Ints | None = None  # the levels between two zeros (`free_from`)

    def arrays(self) -> tuple[Ints, Ints]:
        """Breakpoints and levels as int64 arrays, for vectorised scans; kept until a change."""
        if self._arrays is None:
            import numpy as np  # loaded only by the vectorised scans that need it

            self._arrays = (
                np.array(self._times, dtype=np.int64),
                np.array(self._levels, dtype=np.int64),
            )
        return self._arrays

    def __len__(self) -> int:
        return len(self._times)

    def last_breakpoint(self, before: int) -> int | None:
        """The last instant before `before` at which the level changes."""
        i = bisect_left(self._times, before)
        return self._times[i - 1] if i > 0 else None

    def drops(self, start: int, end: int) -> list[int]:
        """Breakpoints in (start, end) where the level falls (some booking ends)."""
        times, levels = self._times, self._levels
        i = bisect_right(times, start)
        j = bisect_left(times, end, i)
        if i >= j:
            return []
        before = levels[i - 1 : j - 1] if i > 0 else [0, *levels[: j - 1]]
        pieces = zip(times[i:j], levels[i:j], before, strict=True)
        return [t for t, here, prior in pieces if here < prior]

    def drop_times(self, start: int, end: int) -> Ints:
        """`drops(start, end)` as an int64 array, sliced from every drop found once per change.

        A search that follows a cut over a week reads the same timelines
        again and again while nothing is booked in between.
        """
        import numpy as np  # loaded only by the vectorised scans that need it

        if self._drops is None:
            times, levels = self.arrays()
            prior = np.concatenate((np.zeros(1, np.int64), levels[:-1]))
            self._drops = times[levels < prior]
        every = self._drops
        # The array's own method: numpy's function would dispatch to it, at a cost.
        return every[every.searchsorted(start, "right") : every.searchsorted(end, "left")]

    def next_drop(self, after: int) -> int | None:
        """The first breakpoint after `after` where the level falls, or None."""
        times, levels = self._times, self._levels
        i = bisect_right(times, after)
        previous = levels[i - 1] if i > 0 else 0
        while i < len(times):
            if levels[i] < previous:
                return times[i]
            previous = levels[i]
            i += 1
        return None

    def level_at(self, instant: int) -> int:
        i = bisect_right(self._times, instant) - 1
        return self._levels[i] if i >= 0 else 0

    def max_booked(self, start: int, end: int) -> int:
        """The highest booked level anywhere in [start, end)."""
        times = self._times
        if not times or start >= end:
            return 0
        first = bisect_right(times, start) - 1
        last = bisect_left(times, end)
        if first < 0:
            return max(self._levels[0:last], default=0)
        return max(self._levels[first:last])

    def free(self, start: int, end: int) -> int:
        """The bandwidth still free throughout [start, end)."""
        # `max_booked` inlined: this runs once per link in every search.
        times = self._times
        if not times or start >= end:
            return self.capacity
        first = bisect_right(times, start) - 1
        last = bisect_left(times, end, first + 1 if first >= 0 else 0)
        if first < 0:
            return self.capacity - max(self._levels[0:last], default=0)
        if last == first + 1:
            return self.capacity - self._levels[first]
        return self.capacity - max(self._levels[first:last])

    def padded_levels(self) -> Ints:
        """The levels between a zero before the first piece and one after the last."""
        import numpy as np

        if self._padded is None:
            zero = np.zeros(1, np.int64)
            self._padded = np.concatenate((zero, self.arrays()[1], zero))
        return self._padded

    def free_from(self, starts: Ints, duration: int) -> Ints:
        """`free(s, s + duration)` for every s of `starts`, in one numpy pass."""
        import numpy as np  # loaded only by the vectorised scans that need it

        times = self.arrays()[0]
        if not len(times):
            return np.full(len(starts), self.capacity, dtype=np.int64)
        # A zero before the first breakpoint (the level there) and one after
        # the last (a bound for reduceat): piece i of the timeline is padded[i + 1].
        padded = self.padded_levels()
        # Pairs (first, last) side by side: every other reduceat is a window's maximum.
        bounds = np.empty(2 * len(starts), dtype=np.int64)
        bounds[0::2] = times.searchsorted(starts, side="right")
        bounds[1::2] = times.searchsorted(starts + duration, side="left")
        bounds[1::2] += 1
        highest = np.maximum.reduceat(padded, bounds)[::2]
        return self.capacity - highest

    def book(self, start: int, end: int, bandwidth: int) -> None:
        """Add `bandwidth` on [start, end); refuses to go above capacity."""
        if start >= end or bandwidth <= 0:
            return
        if self.max_booked(start, end) + bandwidth > self.capacity:
            raise OverbookingError(
                f"booking {bandwidth} bit/s on [{start}, {end}) exceeds capacity {self.capacity}"
            )
        self._add(start, end, bandwidth)

    def release(self, start: int, end: int, bandwidth: int) -> None:
        """Remove a booking made earlier with exactly these arguments."""
        if start >= end or bandwidth <= 0:
            return
        self._add(start, end, -bandwidth)
        self._compact(start, end)

    def _add(self, start: int, end: int, delta: int) -> None:
        self._arrays = self._drops = self._padded = None
        i = self._split(start)
        j = self._split(end)
        levels = self._levels
        for k in range(i, j):
            levels[k] += delta
            if levels[k] < 0:
                raise OverbookingError(f"release below zero at {self._times[k]}")

    def _split(self, instant: int) -> int:
        """Ensure a breakpoint at `instant` and return its index."""
        times = self._times
        i = bisect_left(times, instant)
        if i < len(times) and times[i] == instant:
            return i
        level = self._levels[i - 1] if i > 0 else 0
        times.insert(i, instant)
        self._levels.insert(i, level)
        return i

    def _compact(self, start: int, end: int) -> None:
        """Drop breakpoints in [start, end] that no longer change the level."""
        self._arrays = self._drops = self._padded = None
        times, levels = self._times, self._levels
        i = max(bisect_left(times, start), 0)
        j = min(bisect_right(times, end), len(times))
        for k in range(j - 1, i - 1, -1):
            previous = levels[k - 1] if k > 0 else 0
            if levels[k] == previous:
                del times[k]
                del levels[k]

    def steps(self, start: int, end: int) -> Iterator[Step]:
        """The booked level as maximal constant pieces covering [start, end)."""
        if start >= end:
            return
        times, levels = self._times, self._levels
        i = bisect_right(times, start)
        cursor = start
        level = levels[i - 1] if i > 0 else 0
        while i < len(times) and times[i] < end:
            yield cursor, times[i], level
            cursor, level = times[i], levels[i]
            i += 1
        yield cursor, end, level

    def breakpoints(self, start: int, end: int) -> list[int]:
        """Instants in [start, end) where the booked level changes."""
        return self._times[bisect_left(self._times, start) : bisect_left(self._times, end)]

    def blocked_starts(self, need: int, duration: int, start: int, end: int) -> list[Span]:
        """Start instants in [start, end) whose [s, s + duration) lacks `need` free.

        A run [x, y) of pieces with too little free bandwidth blocks every start
        s with s < y and s + duration > x, i.e. s in [x - duration + 1, y).
        """
        limit = self.capacity - need
        if limit < 0:
            return [(start, end)]
        times, levels = self._times, self._levels
        horizon = end + duration - 1
        i = bisect_right(times, start)
        j = bisect_left(times, horizon)
        here = levels[i:j]
        before = levels[i - 1] if i > 0 else 0
        # A Python loop over every piece was most of ALL-SLOTS' time: most
        # links have room throughout (max() decides that in C), and on the
        # others a comprehension finds the few pieces over the limit.
        if before <= limit and (not here or max(here) <= limit):
            return []
        over = [k for k, level in enumerate(here, i) if level > limit]
        if before > limit:
            over.insert(0, i - 1)
        blocked: list[Span] = []
        first = last = over[0]
        for k in [*over[1:], -2]:
            if k == last + 1:
                last = k
                continue
            x = times[first] if first >= i else start
            y = times[last + 1] if last + 1 < j else horizon
            lo, hi = max(x - duration + 1, start), min(y, end)
            if lo < hi:
                if blocked and lo <= blocked[-1][1]:
                    blocked[-1] = (blocked[-1][0], max(hi, blocked[-1][1]))
                else:
                    blocked.append((lo, hi))
            first = last = k
        return blocked

    def feasible_starts(self, need: int, duration: int, start: int, end: int) -> IntervalSet:
        """Start instants s in [start, end) with `need` free throughout [s, s + duration)."""
        blocked = IntervalSet(tuple(self.blocked_starts(need, duration, start, end)))
        return IntervalSet.span(start, end).difference(blocked)


def free_from_many(timelines: Sequence[Timeline], starts: Ints, duration: int) -> Ints:
    """`free_from` of each timeline (one row each).

    A search per timeline over its own breakpoints: laying several
    timelines' breakpoints end to end for one search over them all cost
    more (the copies) than it saved in calls, for the few links of a cut.
    Each window's two bounds are found by one search: breakpoints are
    integers, so those before s + duration are those up to s + duration - 1.
    """
    import numpy as np  # loaded only by the vectorised scans that need it

    # (start, end - 1) side by side, as `free_from`'s pairs of bounds.
    queries = np.empty(2 * len(starts), dtype=np.int64)
    queries[0::2] = starts
    np.add(starts, duration - 1, out=queries[1::2])
    out = np.empty((len(timelines), len(starts)), dtype=np.int64)
    for row, timeline in enumerate(timelines):
        times = timeline.arrays()[0]
        if not len(times):
            out[row] = timeline.capacity
            continue
        bounds = times.searchsorted(queries, side="right")
        bounds[1::2] += 1
        highest = np.maximum.reduceat(timeline.padded_levels(), bounds)[::2]
        np.subtract(timeline.capacity, highest, out=out[row])
    return out
