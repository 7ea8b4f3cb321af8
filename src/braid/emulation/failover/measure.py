"""What the 1 kHz probe stream says about a fail-over: when packets took the other path.

Both hosts share the machine's clock, so a packet's one-way delay (arrival
minus send) tells which path it took: the paths' emulated delays are far
apart, and `split_ms` lies between them.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from braid.adapters.emulation.probe import ProbeTrace

__all__ = ["moved_back", "moved_early", "outage_ms", "through_after"]


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


def through_after(trace: ProbeTrace, events: Sequence[float], within: float) -> list[float | None]:
    """Per event: seconds from a cut until the first packet sent after it that arrived.

    A cut path carries nothing (the emulator drops what it holds too), so
    that packet took the other path. None when none sent within `within`
    seconds of the event arrived.
    """
    sent = sorted(sent for _, sent, _ in trace.arrivals)
    moved: list[float | None] = []
    for event in events:
        at = bisect.bisect_left(sent, event)
        first = sent[at] if at < len(sent) else None
        moved.append(None if first is None or first >= event + within else first - event)
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


def moved_early(actions: Sequence[float], events: Sequence[float], put_back: float) -> list[bool]:
    """Per event: whether a site had already failed over when it came (cut, RTT extension).

    `actions` are the times of the sites' fail-overs; the run puts both sites
    back on the primary `put_back` seconds after each event. A fail-over
    between the last put-back (or the start) and the event found nothing
    wrong with the path: the event then finds the site on the standby, and
    its timings say nothing about the method.
    """
    early = []
    for k, event in enumerate(events):
        since = events[k - 1] + put_back if k else float("-inf")
        early.append(any(since < t < event for t in actions))
    return early
