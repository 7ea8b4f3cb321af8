"""What a modify changes in a committed multi-domain reservation, and the request it makes.

A modify is make-before-break: the new version is negotiated as a fresh
transaction, each agent placing it as if the old version were gone and
booking only its excess over the old while both stand, and only a committed
new version releases the old one. One that does not fit is refused and the
old stands unchanged. This module only works out the new request.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from braid.app.errors import RejectedError
from braid.app.negotiation.results import NegotiationRequest
from braid.core.errors import InputError
from braid.core.negotiation.strategies import Strategy

MAX_PATHS = 8


@dataclass(frozen=True, slots=True)
class Modification:
    """The fields to change; None keeps the reservation's own."""

    bandwidth: int | None = None
    start: int | None = None
    end: int | None = None
    max_paths: int | None = None
    strategy: Strategy | None = None

    def empty(self) -> bool:
        return all(
            value is None
            for value in (self.bandwidth, self.start, self.end, self.max_paths, self.strategy)
        )


def modified(
    old: NegotiationRequest, change: Modification, now: int, grace: int = 5
) -> NegotiationRequest:
    """The new version's request; an InputError names the field, a RejectedError says why
    the reservation cannot be modified at all.

    A window already running keeps running: unless a new start is given, the new
    version starts now (the part of the old one that is over needs no booking, and
    the agents refuse windows in the past).
    """
    if change.empty():
        raise InputError("body", "nothing to change: give bandwidth, start, end or max_paths")
    end = old.end if change.end is None else change.end
    if old.end <= now and change.end is None:
        raise RejectedError(f"reservation {old.id!r} has ended: nothing to modify")
    if change.start is None:
        start = max(old.start, now)
    elif change.start < now - grace:
        raise InputError("window.start", "is in the past")
    else:
        start = change.start
    if end <= start:
        raise InputError("window.end", f"must be after start ({start})")
    bandwidth = old.bandwidth if change.bandwidth is None else change.bandwidth
    if bandwidth <= 0:
        raise InputError("bandwidth", "must be positive")
    max_paths = old.max_paths if change.max_paths is None else change.max_paths
    if not 0 <= max_paths <= MAX_PATHS:
        raise InputError("max_paths", f"must be between 1 and {MAX_PATHS}")
    strategy = old.strategy if change.strategy is None else change.strategy
    return replace(
        old, bandwidth=bandwidth, start=start, end=end, max_paths=max_paths, strategy=strategy
    )
