"""Propagation latency from coordinates."""

from __future__ import annotations

import math
from typing import Final

EARTH_RADIUS_KM: Final = 6371.0088
# Light in fibre travels at about two thirds of its speed in vacuum.
FIBRE_KM_PER_MS: Final = 299_792.458 * 2 / 3 / 1000


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlmb = math.radians(lon2 - lon1)
    h = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def fibre_latency_ms(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """One-way latency over a fibre laid along the great circle."""
    return great_circle_km(lat1, lon1, lat2, lon2) / FIBRE_KM_PER_MS
