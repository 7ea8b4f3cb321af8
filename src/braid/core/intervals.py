"""Sets of integer instants as sorted, disjoint, half-open intervals.

This is the algebra of the ALL-SLOTS semiring: union is the "addition",
intersection the "multiplication"; the empty set and the whole line are the
identities.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

Span = tuple[int, int]


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
        return IntervalSet.of(self.spans + other.spans)

    def intersection(self, other: IntervalSet) -> IntervalSet:
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
        j = 0
        for start, end in self.spans:
            cursor = start
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
