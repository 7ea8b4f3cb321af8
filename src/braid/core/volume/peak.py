"""The flattest profile: the lowest peak rate that still moves the volume by the deadline."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["lowest_peak"]


def lowest_peak(pieces: Sequence[tuple[int, int]], bits: int) -> int | None:
    """The least integer R with sum(min(rate, R) * length) >= bits over (rate, length) pieces.

    The sum is a concave, piecewise linear function of R, with a corner at
    each piece's rate: between two consecutive rates it is the full volume
    of the pieces at or below the lower one plus R times the length of the
    others. So the rates are sorted, the segment where the sum first
    reaches `bits` is found, and R is the ceiling of the linear solve there
    (exact in integers). None if even the highest rate does not reach it.
    """
    ordered = sorted((rate, length) for rate, length in pieces if rate > 0 and length > 0)
    below = 0  # the volume of the pieces whose rate is at most the previous corner
    above = sum(length for _, length in ordered)  # the length of the other pieces
    i = 0
    while i < len(ordered):
        corner = ordered[i][0]
        if below + corner * above >= bits:
            return max(1, -(-(bits - below) // above))
        while i < len(ordered) and ordered[i][0] == corner:
            below += corner * ordered[i][1]
            above -= ordered[i][1]
            i += 1
    return None
