"""`braid serve`'s reservations as a plan source: compiled with the labels given at booking."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from braid.app.ports import Repository
from braid.app.provisioning.ports import Due
from braid.app.records import Reservation
from braid.app.reservations.plan_facts import labels_of, policing_of, protection_of
from braid.app.reservations.volumes import profile_of
from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.provisioning.profile_steps import step_changes, step_in_force, step_labels
from braid.core.provisioning.schedule import Window
from braid.core.rules.calendar import Assigned
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import PortMap, RulePlan, RuleRequest

__all__ = ["ReservationPlans", "Wiring"]


@dataclass(frozen=True, slots=True)
class Wiring:
    """The data plane's ports, and which host stands for each node that ends reservations."""

    ports: PortMap
    host_at: Mapping[str, str]  # topology node -> host name in `ports.hosts`
    enforce: bool = True  # hold rates on the wire (meters and queues), or only route


class ReservationPlans:
    def __init__(self, repo: Repository, wiring: Wiring, topology: Callable[[], Topology]) -> None:
        self.repo, self.wiring, self.topology = repo, wiring, topology
        self._records: dict[str, Reservation] = {}

    def booked(self) -> list[Due]:
        records = self.repo.booked()
        self._records = {r.id: r for r in records}
        return [Due(r.id, _window(r), r.created_at) for r in records]

    def plan(self, booking: str, now: int) -> RulePlan | None:
        record = self._records.get(booking) or self.repo.get(booking)
        return None if record is None else self._compile(record, now)

    def _compile(self, r: Reservation, now: int) -> RulePlan:
        labels = labels_of(r.plan)
        if labels is None:
            raise InputError("vlans", "booked before braid assigned VLANs; modify it to get some")
        hosts = [self.wiring.host_at.get(node) for node in (r.src, r.dst)]
        for node, host in zip((r.src, r.dst), hosts, strict=True):
            if host is None:
                raise InputError("hosts", f"the wiring names no host at node {node!r}")
        allocations = r.allocations
        profile = profile_of(r)
        if profile is not None:
            # A volume carries the rates and paths of the step in force; a step change
            # is a change of the same reservation's rules, made before broken.
            step = step_in_force(profile, now)
            allocations, labels = step.allocations, step_labels(profile, labels, step)
        policing = policing_of(r.plan) if self.wiring.enforce else None
        request = RuleRequest(r.id, allocations, str(hosts[0]), str(hosts[1]), policing=policing)
        paths = protection_of(r.plan)
        if paths is not None:
            # The traffic's path first, the other in the fast-failover groups'
            # second buckets; the VLANs are stored primary first, and each
            # stays with its path, so a fail-over changes only the groups.
            request = replace(request, standby=paths.inactive)
            if paths.on_standby:
                labels = Assigned(labels.vlans[::-1], labels.group_ids)
        return compile_reservation(request, self.topology(), self.wiring.ports, labels)


def _window(r: Reservation) -> Window:
    try:
        profile = profile_of(r)
    except InputError:
        profile = None  # its compile says why, for this reservation alone
    steps = () if profile is None else step_changes(profile)
    return Window(r.state, r.start, r.end, r.hold_expires_at, steps)
