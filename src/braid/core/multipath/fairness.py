"""Jain's fairness index (Jain, Chiu and Hawe, 1984), as seed 002 uses it over flows.

J(x) = (sum x)^2 / (n * sum x^2): 1 when every flow gets the same, 1/n when
one flow gets everything. Seed 002 (§IV-A3) takes it over ten TCP flows'
throughputs each second and reports the mean (0.81, sigma 0.042).
"""

from __future__ import annotations

from collections.abc import Sequence

from braid.core.errors import InputError

__all__ = ["jain_index"]


def jain_index(rates: Sequence[float]) -> float:
    """Jain's index of `rates` (any unit, each >= 0); all zero counts as fair (1)."""
    if not rates:
        raise InputError("rates", "at least one rate is needed")
    if any(r < 0 for r in rates):
        raise InputError("rates", "rates must not be negative")
    squares = sum(r * r for r in rates)
    if squares == 0:
        return 1.0
    return sum(rates) ** 2 / (len(rates) * squares)
