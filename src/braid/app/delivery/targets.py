"""`braid serve`'s installed reservations as delivery targets: the provisioning store says
which are installed, the plans are compiled as the provisioner compiles them."""

from __future__ import annotations

from collections.abc import Callable

from braid.app.delivery.ports import Target
from braid.app.ports import Repository
from braid.app.provisioning.ports import ProvisioningStore
from braid.app.provisioning.reservations import ReservationPlans, Wiring
from braid.app.records import Reservation
from braid.app.reservations.volumes import profile_of
from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.provisioning.profile_steps import step_in_force
from braid.core.provisioning.status import Phase

__all__ = ["ReservationTargets", "booked_bps"]


class ReservationTargets:
    def __init__(
        self,
        repo: Repository,
        store: ProvisioningStore,
        wiring: Wiring,
        topology: Callable[[], Topology],
    ) -> None:
        self.repo, self.store, self.wiring = repo, store, wiring
        self.plans = ReservationPlans(repo, wiring, topology)

    def installed(self, now: int) -> list[Target]:
        # A pass writes `installed` only once the circuit check after the install has run:
        # a reservation's first sample (its baseline) has the check's probes behind it.
        found = []
        statuses = self.store.statuses()
        for rid in sorted(r for r, s in statuses.items() if s.phase is Phase.INSTALLED):
            record = self.repo.get(rid)
            if record is None:
                continue
            try:
                plan = self.plans.plan(rid, now)
                booked = booked_bps(record, now)
            except InputError:
                continue  # the provisioning loop says why it cannot be compiled
            if plan is None:
                continue
            src, dst = (
                self.wiring.ports.host(self.wiring.host_at[n]) for n in (record.src, record.dst)
            )
            found.append(Target(rid, plan, src, dst, booked))
        return found

    def kept(self) -> set[str]:
        return {r for r, s in self.store.statuses().items() if s.phase in _STILL_WANTED}


# A pass that repairs a reservation's rules marks it installing for a moment;
# its samples must survive that (its counters may restart, which the report
# handles), and those of a failed one that is being retried too.
_STILL_WANTED = frozenset({Phase.INSTALLED, Phase.INSTALLING, Phase.FAILED})


def booked_bps(record: Reservation, now: int) -> int:
    """The rate booked at `now`: a volume transfer's step in force, else the reservation's."""
    profile = profile_of(record)
    if profile is None:
        return record.bandwidth
    return sum(a.bandwidth for a in step_in_force(profile, now).allocations)
