"""Exact integer shares of a request and the weights the edge switch uses."""

from __future__ import annotations

from collections.abc import Sequence


def proportional_shares(
    need: int, amounts: Sequence[int], *, capped: bool = True
) -> tuple[int, ...]:
    """Split `need` in proportion to `amounts` (largest remainder), exactly.

    Each share is at most its amount whenever need <= sum(amounts): the exact
    quotient need * c / C is at most c, its floor is below it whenever a
    remainder exists, so rounding one up stays within c. Ties in the
    remainder go to the earlier (wider) path, which keeps the split
    deterministic. With `capped=False` the amounts are only weights (used to
    scale an existing split up).
    """
    total = sum(amounts)
    if total <= 0 or need < 0 or any(a < 0 for a in amounts):
        raise ValueError("shares need positive amounts and a non-negative request")
    if capped and need > total:
        raise ValueError(f"cannot share {need} over amounts totalling {total}")
    floors = [need * a // total for a in amounts]
    remainders = [need * a % total for a in amounts]
    left = need - sum(floors)
    order = sorted(range(len(amounts)), key=lambda i: (-remainders[i], i))
    for i in order[:left]:
        floors[i] += 1
    return tuple(floors)


def weights(shares: Sequence[int]) -> tuple[float, ...]:
    """w_j = c_j / sum(c), rounded to 6 decimals, still summing to 1 (seed 002 §III-C).

    Rounding each weight alone can leave the sum a few millionths off; the
    largest weight absorbs that, as it is the one least changed relatively.
    """
    total = sum(shares)
    if total <= 0:
        return ()
    rounded = [round(s / total, 6) for s in shares]
    big = max(range(len(rounded)), key=lambda i: (rounded[i], -i))
    rounded[big] = round(1.0 - (sum(rounded) - rounded[big]), 6)
    return tuple(rounded)
