"""Size the receiving edge's resequencer (seed 002, Algorithm 1) from its paths.

While the slowest path's segment is on its way, the other paths keep
delivering: for a delay spread of Δ seconds the buffer must hold about
Δ × rate / segment size segments before a gap can be called a loss. MPSDN
sizes its threshold T from the MDI and the paths' bandwidths; braid does the
same with the spread itself, in milliseconds, and with the reservation's
whole rate (a safe upper bound on what arrives while waiting).

The delays the topology declares are propagation delays only. Under load
the slow path's queue adds to the spread (the edge bench saw threshold
releases grow with the MDI when T came from the configured delays), so a
spread taken from *declared* latencies gets a margin of a quarter of the
largest delay plus 2 ms; a spread taken from *measured* round trips (half
of each, under the traffic it will carry) only gets the 2 ms of jitter.
The hold time, after which a gap is given up, is twice the spread with its
margin plus 5 ms: a lost segment costs the flow at most that much.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError

__all__ = ["DEFAULT_SEGMENT_BYTES", "LRF", "ReseqSizing", "size_resequencer"]

LRF: Final = 20  # seed 002 §III-D: "a value of 20 allowed the buffer to recover"
DEFAULT_SEGMENT_BYTES: Final = 1448  # a TCP segment at MTU 1500 with timestamps
JITTER_MS: Final = 2.0
DECLARED_MARGIN: Final = 0.25  # of the largest declared one-way delay: queueing not declared
HOLD_EXTRA_MS: Final = 5.0


@dataclass(frozen=True, slots=True)
class ReseqSizing:
    """S, T, LRF and the hold time for one edge, and the spread they were sized from.

    `basis` says where the delays came from ("declared" latencies or
    "measured" round trips); `spread_ms` is the delay difference plus its
    margin, the time the buffer is sized to bridge.
    """

    buffer_size: int
    threshold: int
    lrf: int
    hold_ms: float
    spread_ms: float
    basis: str


def size_resequencer(
    one_way_ms: Sequence[float],
    total_bps: int,
    *,
    measured: bool = False,
    segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    burst: int = 1,
) -> ReseqSizing:
    """T = ⌈spread × rate / segment⌉ + 2 bursts, S = 2T, hold = 2 × spread + 5 ms."""
    if not one_way_ms or any(not math.isfinite(d) or d < 0 for d in one_way_ms):
        raise InputError("one_way_ms", f"need delays >= 0 ms, one per path, got {one_way_ms}")
    if total_bps <= 0:
        raise InputError("total_bps", f"must be positive, got {total_bps}")
    if segment_bytes <= 0 or burst < 1:
        raise InputError("segment_bytes", "segment size and burst must be positive")
    margin = JITTER_MS if measured else DECLARED_MARGIN * max(one_way_ms) + JITTER_MS
    spread = max(one_way_ms) - min(one_way_ms) + margin
    segments = math.ceil(spread / 1000 * total_bps / 8 / segment_bytes)
    threshold = segments + 2 * burst
    return ReseqSizing(
        buffer_size=2 * threshold,
        threshold=threshold,
        lrf=LRF,
        hold_ms=round(2 * spread + HOLD_EXTRA_MS, 3),
        spread_ms=round(spread, 3),
        basis="measured" if measured else "declared",
    )
