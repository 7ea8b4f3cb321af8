"""Every timeline of a network side by side in two arrays, for vectorised scans.

ALL-SLOTS needs, for every link, the start times a booking of `need` for
`duration` cannot take: the runs of pieces booked above capacity - need,
widened by the duration. A loop over each link's pieces in Python was most
of its time; here one pass of numpy finds the runs of all links at once.

Each timeline owns a slot of the arrays with room to spare: a booking marks
the rows it changed with its window (`touch`), and a marked row is patched
only when a scan next reads it: breakpoints before the window stay, those
after it shift together, those inside are copied from the timeline. A row
that outgrows its slot moves to a larger one at the end; the arrays are
laid out afresh once the abandoned slots outweigh the live ones. So a
booking costs a patch of the few rows it changed, not a rebuild of all.
Reads patch rows: one reader at a time.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from braid.core.model.intervals import Span
from braid.core.model.timeline import Timeline

Ints = NDArray[np.int64]

# Instants stay well inside int64 (FOREVER is 2**62), or the scan falls back.
_INT64_SAFE = 1 << 62


_ZERO = np.zeros(1, dtype=np.int64)
_LAST = np.full(1, -1, dtype=np.int64)


def _room(length: int) -> int:
    """Slot size for a row of `length` breakpoints: growth for many bookings first."""
    return length + length // 2 + 16


class Stack:
    """The breakpoints and levels of several timelines, each in a slot of two arrays."""

    def __init__(self, timelines: Sequence[Timeline]) -> None:
        self.timelines = tuple(timelines)
        self._layout()

    def _layout(self) -> None:
        """Every row copied afresh into slots laid end to end."""
        rooms = [_room(len(t)) for t in self.timelines]
        starts = np.concatenate((np.zeros(1, np.int64), np.cumsum(rooms, dtype=np.int64)))
        total = int(starts[-1])
        self.times: Ints = np.zeros(total, np.int64)
        self.levels: Ints = np.zeros(total, np.int64)
        # Where each row's slot starts (indexed by numpy) and how long it may grow.
        self.offsets: Ints = starts[:-1].copy()
        self._at: list[int] = self.offsets.tolist()  # the same, for Python
        self._rooms = rooms
        self._used = total
        self._live = total
        self._lengths = [0] * len(self.timelines)  # breakpoints held in each slot
        # Rows changed since last copied -> the instants the changes lie within.
        self._dirty: dict[int, tuple[int, int]] = {}
        for row, timeline in enumerate(self.timelines):
            self._copy(row, timeline)

    def touch(self, rows: Iterable[int], since: int, until: int) -> None:
        """Mark rows whose timelines changed within [since, until]; copied again when read.

        Booking or releasing over [since, until) only adds, moves or drops
        breakpoints inside [since, until]: those before keep their places,
        those after only shift together, so a row is patched, not copied.
        """
        dirty = self._dirty
        for row in rows:
            known = dirty.get(row)
            dirty[row] = (
                (since, until) if known is None else (min(known[0], since), max(known[1], until))
            )

    def _fresh(self, rows: Iterable[int]) -> None:
        """Bring the touched rows among `rows` up to date with their timelines."""
        dirty = self._dirty
        if not dirty:
            return
        for row in rows:
            span = dirty.pop(row, None)
            if span is not None:
                self._copy(row, self.timelines[row], span)

    def _copy(self, row: int, timeline: Timeline, span: tuple[int, int] | None = None) -> None:
        """Copy the row from its timeline: all of it, or patch what changed within `span`."""
        length = len(timeline)
        if length > self._rooms[row]:
            self._move(row, _room(length))
            if self._used > 2 * self._live:  # mostly abandoned slots: lay out afresh
                self._layout()
                return
            span = None  # a new slot holds nothing yet
        at = int(self.offsets[row])
        if span is None or not self._patch(row, timeline, span):
            times, levels = timeline.arrays()  # kept by an unchanged timeline: a plain copy
            self.times[at : at + length] = times
            self.levels[at : at + length] = levels
        self._lengths[row] = length

    def _patch(self, row: int, timeline: Timeline, span: tuple[int, int]) -> bool:
        """Shift the breakpoints after the span, copy those within; False if they disagree."""
        at, was, length = int(self.offsets[row]), self._lengths[row], len(timeline)
        since, until = span
        times, levels = self.times, self.levels
        after_old = int(np.searchsorted(times[at : at + was], until, "right"))
        head = bisect_left(timeline._times, since)
        after = bisect_right(timeline._times, until, head)
        if length - after != was - after_old:
            return False  # not a change within the span: copied whole instead
        if after != after_old:
            # Overlapping slices are copied as if through a buffer by numpy.
            times[at + after : at + length] = times[at + after_old : at + was]
            levels[at + after : at + length] = levels[at + after_old : at + was]
        times[at + head : at + after] = timeline._times[head:after]
        levels[at + head : at + after] = timeline._levels[head:after]
        return True

    def _move(self, row: int, room: int) -> None:
        """Give `row` a new slot of `room` at the end, growing the arrays if need be."""
        if self._used + room > len(self.times):
            size = max(2 * len(self.times), self._used + room)
            self.times = np.concatenate((self.times, np.zeros(size - len(self.times), np.int64)))
            self.levels = np.concatenate((self.levels, np.zeros(size - len(self.levels), np.int64)))
        self._live += room - self._rooms[row]
        self.offsets[row] = self._used
        self._at[row] = self._used
        self._rooms[row] = room
        self._used += room

    def max_levels(self, start: int, end: int, rows: Ints) -> Ints:
        """The highest level of each of `rows` anywhere in [start, end) (0 before it starts)."""
        picked = rows.tolist()
        self._fresh(picked)
        begins, counts = [], []
        for row in picked:
            times = self.timelines[row]._times
            # The piece holding at start (if any) up to the last breakpoint before end.
            first = max(bisect_right(times, start) - 1, 0)
            begins.append(first)
            counts.append(max(bisect_left(times, end) - first, 0))
        out = np.zeros(len(picked), dtype=np.int64)
        count = np.array(counts, dtype=np.int64)
        total = int(count.sum())
        if total:
            heads = np.cumsum(count) - count
            index = np.arange(total, dtype=np.int64) + np.repeat(
                self.offsets[rows] + np.array(begins, dtype=np.int64) - heads, count
            )
            filled = count > 0
            out[filled] = np.maximum.reduceat(self.levels[index], heads[filled])
        return np.maximum(out, 0)

    def blocked_starts(
        self, rows: Sequence[int], need: int, duration: int, lo: int, hi: int
    ) -> dict[int, list[Span]]:
        """`Timeline.blocked_starts` of each row in `rows`; rows with none are left out."""
        horizon = hi + duration - 1
        if horizon >= _INT64_SAFE or lo <= -_INT64_SAFE or lo >= hi:
            return self._one_by_one(rows, need, duration, lo, hi)
        self._fresh(rows)
        out: dict[int, list[Span]] = {}
        at = self._at
        # Per row looked at: where its pieces begin and stop in the arrays, and
        # where the first breakpoint after lo is (the piece before it holds at lo).
        begins, stops, firsts, limits, picked = [], [], [], [], []
        for row in rows:
            timeline = self.timelines[row]
            limit = timeline.capacity - need
            if limit < 0:
                out[row] = [(lo, hi)]
                continue
            times = timeline._times
            i = bisect_right(times, lo)
            j = bisect_left(times, horizon, i)
            if j == 0:
                continue  # nothing booked before the horizon
            base = at[row]
            begins.append(base + max(i - 1, 0))
            stops.append(base + j)
            firsts.append(base + i)
            limits.append(limit)
            picked.append(row)
        if picked:
            self._scan(out, picked, (begins, stops, firsts, limits), duration, (lo, hi))
        return out

    def _scan(
        self,
        out: dict[int, list[Span]],
        picked: list[int],
        ranges: tuple[list[int], list[int], list[int], list[int]],
        duration: int,
        window: tuple[int, int],
    ) -> None:
        """Find the runs over the limit of every picked row in one pass.

        The rows' pieces are laid end to end with one filler after each, a
        level below every limit, so no run reaches from one row into the next.
        """
        lo, hi = window
        begins, stops, firsts, limits = ranges
        begin = np.array(begins, dtype=np.int64)
        lengths = np.array(stops, dtype=np.int64) - begin + 1  # with the filler
        ends = np.cumsum(lengths)
        shift = np.repeat(begin - ends + lengths, lengths)
        index = np.arange(int(ends[-1]), dtype=np.int64) + shift
        fillers = ends - 1
        # A filler's index may point one past the arrays: clipped, then overwritten.
        levels = self.levels.take(index, mode="clip")
        levels[fillers] = -1
        if min(limits) == max(limits):
            over = np.flatnonzero(levels > limits[0])
        else:
            over = np.flatnonzero(levels > np.repeat(np.array(limits, dtype=np.int64), lengths))
        if len(over) == 0:
            return
        breaks = np.flatnonzero(over[1:] != over[:-1] + 1)
        heads = over[np.concatenate((_ZERO, breaks + 1))]
        tails = over[np.concatenate((breaks, _LAST))] + 1  # the first piece after each run
        row = np.searchsorted(fillers, heads)
        head_at = index[heads]
        x = np.where(head_at >= np.array(firsts, dtype=np.int64)[row], self.times[head_at], lo)
        # After a run comes a piece within the scan, or the filler: the horizon.
        y = np.where(
            levels[tails] >= 0, self.times.take(index[tails], mode="clip"), hi + duration - 1
        )
        starts = np.maximum(x - duration + 1, lo)
        finishes = np.minimum(y, hi)
        keep = starts < finishes
        _merge(out, picked, row[keep], starts[keep], finishes[keep])

    def _one_by_one(
        self, rows: Sequence[int], need: int, duration: int, lo: int, hi: int
    ) -> dict[int, list[Span]]:
        out: dict[int, list[Span]] = {}
        for row in rows:
            spans = self.timelines[row].blocked_starts(need, duration, lo, hi)
            if spans:
                out[row] = spans
        return out


def _merge(
    out: dict[int, list[Span]], picked: list[int], rows: Ints, starts: Ints, finishes: Ints
) -> None:
    """Join each row's overlapping or touching spans; both ends rise within a row."""
    if len(rows) == 0:
        return
    joined = np.empty(len(rows), dtype=bool)
    joined[0] = False
    joined[1:] = (rows[1:] == rows[:-1]) & (starts[1:] <= finishes[:-1])
    heads = np.flatnonzero(~joined)
    tails = np.append(heads[1:], len(rows)) - 1
    for row, start, finish in zip(
        rows[heads].tolist(), starts[heads].tolist(), finishes[tails].tolist(), strict=True
    ):
        out.setdefault(picked[row], []).append((start, finish))
