"""What delivery sampling needs from the outside world, beyond the switches' counters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from braid.core.rules.model import HostPort, RulePlan

__all__ = ["DeliveryAudit", "DeliveryTargets", "Target"]


@dataclass(frozen=True, slots=True)
class Target:
    """An installed reservation to sample: its rules, its two hosts, its booked rate now."""

    reservation_id: str
    plan: RulePlan
    src: HostPort
    dst: HostPort
    booked_bps: int


class DeliveryTargets(Protocol):
    def installed(self, now: int) -> list[Target]:
        """Every reservation whose rules the switches hold now (those that cannot be
        compiled are left out: the provisioning loop reports them)."""
        ...

    def kept(self) -> set[str]:
        """Reservations whose samples are kept even when not sampled this pass: those
        still wanted in the switches (being installed or repaired, or failed and retried).
        The others' samples are forgotten."""
        ...


class DeliveryAudit(Protocol):
    """Where the audit entry goes when a reservation's delivery becomes degraded."""

    def degraded(
        self, reservation_id: str, detail: Mapping[str, Any], *, now: int, actor: str
    ) -> None: ...
