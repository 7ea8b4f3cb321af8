"""Sets of integer instants as sorted, disjoint, half-open intervals.

This is the algebra of the ALL-SLOTS semiring: union is the "addition",
intersection the "multiplication"; the empty set and the whole line are the
identities.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter

Span = tuple[int, int]

_end = itemgetter(1)
# Below this ratio of sizes, a pass over both sets costs less than bisecting.
_SKEW = 8


@dataclass(frozen=True, slots=True)
class IntervalSet:
    """An immutable set of instants: sorted, disjoint, non-touching [start, end) spans."""

    spans: tuple[Span, ...] = ()

    @staticmethod
    def of(spans: Iterable[Span]) -> IntervalSet:
        """Normalise any spans (overlapping, touching, empty, unsorted) into a set."""
        merged: list[Span] = []
        for start, end in sorted(s for s in spans if s[0] < s[1]):
            if merged and start <= merged[-1][1]:
                if end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        return IntervalSet(tuple(merged))

    @staticmethod
    def span(start: int, end: int) -> IntervalSet:
        return IntervalSet(((start, end),) if start < end else ())

    def __bool__(self) -> bool:
        return bool(self.spans)

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def __contains__(self, instant: object) -> bool:
        if not isinstance(instant, int):
            return False
        return any(start <= instant < end for start, end in self.spans)

    def first(self) -> int | None:
        return self.spans[0][0] if self.spans else None

    def measure(self) -> int:
        return sum(end - start for start, end in self.spans)

    def union(self, other: IntervalSet) -> IntervalSet:
        if not other.spans:
            return self
        if not self.spans:
            return other
        small, big = sorted((self.spans, other.spans), key=len)
        if len(small) * _SKEW > len(big):
            return IntervalSet.of(self.spans + other.spans)
        # A few spans into many: splice each in where bisect puts it, so the
        # big set is copied in C rather than walked in Python.
        out = list(big)
        for start, end in small:
            i = bisect_right(out, start, key=_end)
            if i > 0 and out[i - 1][1] == start:
                i -= 1  # touching on the left: merge
            j = i
            while j < len(out) and out[j][0] <= end:
                j += 1
            if i < j:
                start, end = min(start, out[i][0]), max(end, out[j - 1][1])
            out[i:j] = [(start, end)]
        return IntervalSet(tuple(out))

    def intersection(self, other: IntervalSet) -> IntervalSet:
        small, big = sorted((self.spans, other.spans), key=len)
        if len(small) * _SKEW <= len(big):
            return IntervalSet(_clip(small, big))
        out: list[Span] = []
        mine, theirs = self.spans, other.spans
        i = j = 0
        while i < len(mine) and j < len(theirs):
            start = max(mine[i][0], theirs[j][0])
            end = min(mine[i][1], theirs[j][1])
            if start < end:
                out.append((start, end))
            if mine[i][1] < theirs[j][1]:
                i += 1
            else:
                j += 1
        return IntervalSet(tuple(out))

    def difference(self, other: IntervalSet) -> IntervalSet:
        out: list[Span] = []
        holes = other.spans
        skip = len(self.spans) * _SKEW <= len(holes)
        j = 0
        for start, end in self.spans:
            cursor = start
            if skip:  # few spans against many holes: jump instead of walking
                j = bisect_right(holes, cursor, lo=j, key=_end)
            while j < len(holes) and holes[j][1] <= cursor:
                j += 1
            k = j
            while k < len(holes) and holes[k][0] < end:
                if holes[k][0] > cursor:
                    out.append((cursor, holes[k][0]))
                cursor = max(cursor, holes[k][1])
                k += 1
            if cursor < end:
                out.append((cursor, end))
        return IntervalSet(tuple(out))

    def as_lists(self) -> list[list[int]]:
        return [[start, end] for start, end in self.spans]


def _clip(small: tuple[Span, ...], big: tuple[Span, ...]) -> tuple[Span, ...]:
    """`small` intersected with `big`, bisecting into `big` once per span of `small`."""
    out: list[Span] = []
    for start, end in small:
        k = bisect_right(big, start, key=_end)
        while k < len(big) and big[k][0] < end:
            lo, hi = max(big[k][0], start), min(big[k][1], end)
            if lo < hi:
                out.append((lo, hi))
            k += 1
    return tuple(out)
