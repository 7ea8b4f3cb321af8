"""What the provisioner needs from the outside world."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from braid.core.delivery.samples import Tally
from braid.core.errors import BraidError
from braid.core.provisioning.circuit_check import CheckResult
from braid.core.provisioning.schedule import Window
from braid.core.provisioning.status import Status
from braid.core.rules.model import HostPort, RulePlan, RuleSet

__all__ = [
    "CircuitChecker",
    "Counts",
    "DeliveryCounters",
    "Due",
    "PlanSource",
    "ProvisioningStore",
    "SwitchError",
    "SwitchTables",
]


@dataclass(frozen=True, slots=True)
class Due:
    """A booking that may need rules: its id, when, and its age (older ones win clashes)."""

    id: str
    window: Window
    created_at: int


class PlanSource(Protocol):
    """What the switches should carry: the bookings, and each one's compiled rules."""

    def booked(self) -> Sequence[Due]:
        """Every booking that is or will be live (not cancelled, not ended)."""
        ...

    def plan(self, booking: str, now: int) -> RulePlan | None:
        """Its rules at `now` (a volume reservation's change at its profile's steps; also
        for one no longer booked, so they can be found and removed); None if unknown; an
        InputError saying why when they cannot be compiled."""
        ...


class SwitchError(BraidError):
    """A switch could not be read or programmed; `switch` names it."""

    def __init__(self, switch: str, message: str) -> None:
        super().__init__(f"switch {switch}: {message}")
        self.switch = switch
        self.message = message


class SwitchTables(Protocol):
    """braid's flows and groups on each switch: read them back, add, delete.

    Only braid's own entries (its cookie tag, its group ids) are ever read
    or touched; every call raises `SwitchError` naming the switch on failure.
    """

    def switches(self) -> tuple[str, ...]: ...

    def dpid(self, switch: str) -> int: ...

    def read(self, switch: str) -> RuleSet: ...

    def apply(self, rule_set: RuleSet) -> None: ...

    def remove(self, rule_set: RuleSet) -> None: ...


@dataclass(frozen=True, slots=True)
class Counts:
    """An installed plan's cumulative counters: `forward` is src -> dst, `reverse` back."""

    forward: Tally
    reverse: Tally


class DeliveryCounters(Protocol):
    """The switches' counters of one installed plan (`braid.core.delivery.flows` says which).

    Raises `SwitchError` naming the switch that could not be read or that
    lacks one of the plan's counting flows or meters.
    """

    def read(self, plan: RulePlan, src: HostPort, dst: HostPort) -> Counts: ...

    def read_all(
        self, plans: Sequence[tuple[RulePlan, HostPort, HostPort]]
    ) -> list[Counts | SwitchError]:
        """Each plan's counts, or the error of the switch that failed it, in order; each
        switch is read once for all of them (a sampling pass)."""
        ...


class CircuitChecker(Protocol):
    """Probes installed reservations' paths (`braid.core.provisioning.circuit_check`).

    Offered by drivers that can inject frames and read rule counters; a
    provisioner without one skips the check. All of a pass's new
    installations are checked at once (one read of each switch's counters
    before and after), a result per plan in order. Raises `SwitchError`
    naming a switch it could not use.
    """

    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]: ...


class ProvisioningStore(Protocol):
    """Each reservation's provisioning state, and the lease that lets one replica act."""

    def statuses(self, ids: Collection[str] | None = None) -> dict[str, Status]:
        """Every reservation's state, or only those of `ids` (missing: never provisioned)."""
        ...

    def put_statuses(self, changed: Mapping[str, Status], *, now: int, actor: str) -> None:
        """Write these states (and an audit entry for each), all or none."""
        ...

    def acquire(self, name: str, holder: str, *, now: int, ttl: int) -> bool:
        """Take or renew lease `name` for `holder` until now + ttl; False if another holds it."""
        ...


class ProvisioningMetrics(Protocol):
    """Where a provisioning loop reports its passes (Prometheus in `braid serve`)."""

    def provisioning_pass(self, seconds: float, failing: int) -> None:
        """One pass took `seconds`; `failing` switches could not be read or changed."""
        ...

    def provisioning_counts(self, counts: Mapping[str, int]) -> None:
        """Reservations by provisioning state."""
        ...
