"""Every timeline of a network side by side in two arrays, for vectorised scans.

ALL-SLOTS needs, for every link, the start times a booking of `need` for
`duration` cannot take: the runs of pieces booked above capacity - need,
widened by the duration. A loop over each link's pieces in Python was most
of its time; here one pass of numpy finds the runs of all links at once.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from braid.core.intervals import Span
from braid.core.timeline import Timeline

Ints = NDArray[np.int64]

# Instants stay well inside int64 (FOREVER is 2**62), or the scan falls back.
_INT64_SAFE = 1 << 62


class Stack:
    """The breakpoints and levels of several timelines, concatenated."""

    def __init__(self, timelines: Sequence[Timeline]) -> None:
        self.timelines = tuple(timelines)
        arrays = [t.arrays() for t in self.timelines]
        lengths = np.array([len(times) for times, _ in arrays], dtype=np.int64)
        self.offsets: Ints = np.concatenate((np.zeros(1, np.int64), np.cumsum(lengths)))
        empty = np.empty(0, np.int64)
        self.times: Ints = np.concatenate([t for t, _ in arrays]) if arrays else empty
        self.levels: Ints = np.concatenate([v for _, v in arrays]) if arrays else empty
        self._sorted: tuple[Ints, Ints, int] | None = None

    def max_levels(self, start: int, end: int, rows: Ints) -> Ints:
        """The highest level of each of `rows` anywhere in [start, end) (0 before it starts)."""
        keys, unique, width = self._keys()
        base = rows * width
        # Elements at or before start, and before end, counted per row.
        at_start = np.searchsorted(keys, base + np.searchsorted(unique, start, "right"))
        before_end = np.searchsorted(keys, base + np.searchsorted(unique, end, "left"))
        begin = np.maximum(at_start - 1, self.offsets[rows])
        counts = np.maximum(before_end - begin, 0)
        out = np.zeros(len(rows), dtype=np.int64)
        total = int(counts.sum())
        if total:
            index = np.arange(total, dtype=np.int64) + np.repeat(
                begin - (np.cumsum(counts) - counts), counts
            )
            filled = counts > 0
            heads = (np.cumsum(counts) - counts)[filled]
            out[filled] = np.maximum.reduceat(self.levels[index], heads)
        return np.maximum(out, 0)

    def _keys(self) -> tuple[Ints, Ints, int]:
        """Row-major sort keys of all breakpoints (row, rank of time), made on first use."""
        if self._sorted is None:
            unique = np.unique(self.times)
            width = len(unique) + 1
            row_of = np.repeat(
                np.arange(len(self.timelines), dtype=np.int64), np.diff(self.offsets)
            )
            keys = row_of * width + np.searchsorted(unique, self.times)
            self._sorted = (keys, unique, width)
        return self._sorted

    def blocked_starts(
        self, rows: Sequence[int], need: int, duration: int, lo: int, hi: int
    ) -> dict[int, list[Span]]:
        """`Timeline.blocked_starts` of each row in `rows`; rows with none are left out."""
        horizon = hi + duration - 1
        if horizon >= _INT64_SAFE or lo <= -_INT64_SAFE or lo >= hi:
            return self._one_by_one(rows, need, duration, lo, hi)
        out: dict[int, list[Span]] = {}
        firsts, ends, limits, picked = [], [], [], []
        for row in rows:
            timeline = self.timelines[row]
            limit = timeline.capacity - need
            if limit < 0:
                out[row] = [(lo, hi)]
                continue
            times = timeline._times
            i = bisect_right(times, lo)
            j = bisect_left(times, horizon, i)
            firsts.append(i)
            ends.append(j)
            limits.append(limit)
            picked.append(row)
        if picked:
            self._scan(out, picked, firsts, ends, limits, duration, lo, hi)
        return out

    def _scan(
        self,
        out: dict[int, list[Span]],
        picked: list[int],
        firsts: list[int],
        ends: list[int],
        limits: list[int],
        duration: int,
        lo: int,
        hi: int,
    ) -> None:
        """Find the runs over the limit of every picked row in one pass."""
        base = self.offsets[np.array(picked, dtype=np.int64)]
        first = np.array(firsts, dtype=np.int64)
        # The piece before the first breakpoint after lo also covers lo.
        begin = base + np.maximum(first - 1, 0)
        stop = base + np.array(ends, dtype=np.int64)
        counts = stop - begin
        total = int(counts.sum())
        if total == 0:
            return
        which = np.repeat(np.arange(len(picked)), counts)
        index = np.arange(total, dtype=np.int64) + np.repeat(
            begin - (np.cumsum(counts) - counts), counts
        )
        over = np.flatnonzero(self.levels[index] > np.array(limits, dtype=np.int64)[which])
        if len(over) == 0:
            return
        over_row = which[over]
        # A run ends where the pieces stop being adjacent or the row changes.
        heads = np.flatnonzero(
            (np.diff(over, prepend=-2) != 1) | (np.diff(over_row, prepend=-1) != 0)
        )
        tails = np.append(heads[1:], len(over)) - 1
        run_row = over_row[heads]
        head_at, tail_at = index[over[heads]], index[over[tails]]
        x = np.where(head_at >= base[run_row] + first[run_row], self.times[head_at], lo)
        after = tail_at + 1
        inside = after < stop[run_row]
        y = np.where(inside, self.times[np.minimum(after, len(self.times) - 1)], hi + duration - 1)
        starts = np.maximum(x - duration + 1, lo)
        finishes = np.minimum(y, hi)
        keep = starts < finishes
        self._merge(out, picked, run_row[keep], starts[keep], finishes[keep])

    @staticmethod
    def _merge(
        out: dict[int, list[Span]], picked: list[int], rows: Ints, starts: Ints, finishes: Ints
    ) -> None:
        """Join each row's overlapping or touching spans; both ends rise within a row."""
        if len(rows) == 0:
            return
        new_row = np.diff(rows, prepend=-1) != 0
        gap = starts > np.concatenate((starts[:1] - 1, finishes[:-1]))
        heads = np.flatnonzero(new_row | gap)
        tails = np.append(heads[1:], len(rows)) - 1
        for row, start, finish in zip(
            rows[heads].tolist(), starts[heads].tolist(), finishes[tails].tolist(), strict=True
        ):
            out.setdefault(picked[row], []).append((start, finish))

    def _one_by_one(
        self, rows: Sequence[int], need: int, duration: int, lo: int, hi: int
    ) -> dict[int, list[Span]]:
        out: dict[int, list[Span]] = {}
        for row in rows:
            spans = self.timelines[row].blocked_starts(need, duration, lo, hi)
            if spans:
                out[row] = spans
        return out
