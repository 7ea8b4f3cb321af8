"""What the 1 kHz probe stream says about a fail-over: when packets took the other path.

Both hosts share the machine's clock, so a packet's one-way delay (arrival
minus send) tells which path it took: the paths' emulated delays are far
apart, and `split_ms` lies between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from braid.adapters.emulation.probe import ProbeTrace

__all__ = ["moved_back", "outage_ms"]


def moved_back(
    trace: ProbeTrace, events: Sequence[float], split_ms: float, within: float
) -> list[float | None]:
    """Per event: seconds from the degradation until packets are off the slow path for good.

    The last packet sent within `within` seconds of the event that arrived
    slow ends the degradation's effect; the first one sent after it that
    arrived fast is traffic on the good path. None when none arrived slow.
    """
    by_send = sorted((sent, (arrived - sent) * 1000) for _, sent, arrived in trace.arrivals)
    moved: list[float | None] = []
    for event in events:
        window = [(s, d) for s, d in by_send if event <= s < event + within]
        slow = [s for s, d in window if d >= split_ms]
        fast = None if not slow else next((s for s, d in window if s > slow[-1]), None)
        moved.append(None if fast is None else fast - event)
    return moved


def outage_ms(trace: ProbeTrace, begin: float, end: float) -> float:
    """The longest run of packets sent in [begin, end) that never arrived, in milliseconds."""
    arrived = {seq for seq, _, _ in trace.arrivals}
    first = max(0, int((begin - trace.first_sent_at) * trace.rate))
    last = min(trace.sent, int((end - trace.first_sent_at) * trace.rate))
    longest = run = 0
    for seq in range(first, last):
        run = 0 if seq in arrived else run + 1
        longest = max(longest, run)
    return 1000 * longest / trace.rate
