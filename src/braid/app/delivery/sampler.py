"""One sampling pass: read every installed reservation's counters, keep them, judge them.

A reservation whose counters cannot be read this time (a switch does not
answer, a flow is missing while being reinstalled) is skipped for this pass
and keeps its samples; the next interval is then simply longer. One audit
entry is written when a reservation becomes degraded (not at every pass
while it stays so), so the audit log says when the shortfall began.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from braid.app.delivery.history import DeliveryHistory
from braid.app.delivery.ports import DeliveryAudit, DeliveryTargets, Target
from braid.app.delivery.reports import ReservationDelivery, reservation_delivery
from braid.app.provisioning.ports import DeliveryCounters, SwitchError
from braid.core.delivery import DeliverySample, DeliveryStatus
from braid.core.delivery.report import DEFAULT_FLOOR, DEFAULT_SUSTAIN
from braid.core.errors import InputError
from braid.core.model.units import BPS_PER_MBPS

__all__ = ["DeliverySampler", "SamplePass"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SamplePass:
    sampled: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)  # reservation -> why
    degraded: tuple[str, ...] = ()  # those that became degraded in this pass


class DeliverySampler:
    def __init__(
        self,
        targets: DeliveryTargets,
        counters: DeliveryCounters,
        history: DeliveryHistory,
        audit: DeliveryAudit,
        *,
        floor: float = DEFAULT_FLOOR,
        sustain: int = DEFAULT_SUSTAIN,
        actor: str = "braid",
    ) -> None:
        self.targets, self.counters, self.history, self.audit = targets, counters, history, audit
        self.floor, self.sustain, self.actor = floor, sustain, actor

    def sample(self, now: int) -> SamplePass:
        targets = self.targets.installed(now)
        sampled: list[str] = []
        failed: dict[str, str] = {}
        degraded: list[str] = []
        try:
            read = self.counters.read_all([(t.plan, t.src, t.dst) for t in targets])
        except InputError as exc:  # a plan without counting flows: none can be judged
            return SamplePass((), {t.reservation_id: str(exc) for t in targets})
        for target, counts in zip(targets, read, strict=True):
            if isinstance(counts, SwitchError):
                failed[target.reservation_id] = str(counts)
                continue
            samples = (
                DeliverySample.of(now, counts.forward),
                DeliverySample.of(now, counts.reverse),
            )
            hosts = (target.src.host, target.dst.host)
            seen = self.history.add(target.reservation_id, hosts, target.booked_bps, samples)
            found = reservation_delivery(
                target.reservation_id, target.booked_bps, seen, floor=self.floor,
                sustain=self.sustain,
            )  # fmt: skip
            statuses = (found.directions[0].report.status, found.directions[1].report.status)
            before = self.history.set_status(target.reservation_id, found.status, statuses)
            sampled.append(target.reservation_id)
            if found.status is DeliveryStatus.DEGRADED and before is not DeliveryStatus.DEGRADED:
                degraded.append(target.reservation_id)
                self._note(target, found, now)
        self.history.keep_only({t.reservation_id for t in targets} | self.targets.kept())
        return SamplePass(tuple(sampled), failed, tuple(degraded))

    def _note(self, target: Target, found: ReservationDelivery, now: int) -> None:
        short = [d for d in found.directions if d.report.status is DeliveryStatus.DEGRADED]
        latest = short[0].report.intervals[-1]
        detail: dict[str, Any] = {
            "delivery": "degraded",
            "direction": f"{short[0].sender} -> {short[0].receiver}",
            "booked_mbps": found.booked_bps / BPS_PER_MBPS,
            "offered_mbps": round(latest.offered_bps / BPS_PER_MBPS, 3),
            "delivered_mbps": round(latest.delivered_bps / BPS_PER_MBPS, 3),
            "intervals": self.sustain,
        }
        log.warning(
            "delivery: reservation %s degraded (%s: %.1f of %.1f Mbit/s booked)",
            target.reservation_id, detail["direction"], detail["delivered_mbps"],
            detail["booked_mbps"],
        )  # fmt: skip
        self.audit.degraded(target.reservation_id, detail, now=now, actor=self.actor)
