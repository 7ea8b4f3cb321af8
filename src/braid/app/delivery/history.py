"""The last samples of each sampled reservation, in memory (thread-safe).

Only the last `keep` samples per direction are kept: enough for the report's
intervals and for the status's sustained window, and bounded however long a
reservation runs. Beside them, each direction's running count since the
reservation's first sample (`Sampled.counted`, what the metrics export): the
first sample is the baseline, taken once the reservation is installed and its
circuit check recorded, so the check's probes, which reach the egress rule
too, are in the baseline and not in the count. Both are lost on restart,
which costs one interval: the first sample after it has nothing to be
compared with, and the count starts again (as a switch's counters do).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

from braid.core.delivery import DeliverySample, DeliveryStatus, DeliveryTotals
from braid.core.delivery.report import counted_between
from braid.core.errors import InputError

__all__ = ["DeliveryHistory", "Sampled"]


@dataclass
class Sampled:
    """One reservation's samples: both directions, with the hosts and the booked rate."""

    sender: str
    receiver: str
    booked_bps: int
    forward: deque[DeliverySample]
    reverse: deque[DeliverySample]
    status: DeliveryStatus = DeliveryStatus.UNMEASURED
    statuses: tuple[DeliveryStatus, DeliveryStatus] = field(
        default=(DeliveryStatus.UNMEASURED, DeliveryStatus.UNMEASURED)
    )
    # Forward and reverse: what the counters counted since the first sample.
    counted: tuple[DeliveryTotals, DeliveryTotals] = (DeliveryTotals(), DeliveryTotals())


class DeliveryHistory:
    def __init__(self, keep: int = 120) -> None:
        if keep < 2:
            raise InputError("delivery_samples", f"must be at least 2, got {keep}")
        self.keep = keep
        self._by_id: dict[str, Sampled] = {}
        self._lock = threading.Lock()

    def add(
        self,
        reservation_id: str,
        hosts: tuple[str, str],
        booked_bps: int,
        samples: tuple[DeliverySample, DeliverySample],
    ) -> Sampled:
        """Record a forward and a reverse sample; returns the reservation's samples so far."""
        with self._lock:
            seen = self._by_id.get(reservation_id)
            if seen is None or (seen.sender, seen.receiver) != hosts:
                seen = Sampled(*hosts, booked_bps, deque(maxlen=self.keep), deque(maxlen=self.keep))
                self._by_id[reservation_id] = seen
            seen.booked_bps = booked_bps
            if seen.forward:  # the first sample is the baseline: nothing counted yet
                forward = seen.counted[0] + counted_between(seen.forward[-1], samples[0])
                reverse = seen.counted[1] + counted_between(seen.reverse[-1], samples[1])
                seen.counted = (forward, reverse)
            seen.forward.append(samples[0])
            seen.reverse.append(samples[1])
            return self._copy(seen)

    def set_status(
        self,
        reservation_id: str,
        status: DeliveryStatus,
        statuses: tuple[DeliveryStatus, DeliveryStatus],
    ) -> DeliveryStatus:
        """Record the reservation's status; returns the one it had before."""
        with self._lock:
            seen = self._by_id[reservation_id]
            before, seen.status, seen.statuses = seen.status, status, statuses
            return before

    def get(self, reservation_id: str) -> Sampled | None:
        with self._lock:
            seen = self._by_id.get(reservation_id)
            return None if seen is None else self._copy(seen)

    def all(self) -> dict[str, Sampled]:
        with self._lock:
            return {rid: self._copy(s) for rid, s in sorted(self._by_id.items())}

    def keep_only(self, reservation_ids: set[str]) -> None:
        """Forget the reservations no longer sampled (ended, cancelled, removed)."""
        with self._lock:
            for rid in set(self._by_id) - reservation_ids:
                del self._by_id[rid]

    @staticmethod
    def _copy(seen: Sampled) -> Sampled:
        return Sampled(
            seen.sender,
            seen.receiver,
            seen.booked_bps,
            deque(seen.forward, maxlen=seen.forward.maxlen),
            deque(seen.reverse, maxlen=seen.reverse.maxlen),
            seen.status,
            seen.statuses,
            seen.counted,
        )
