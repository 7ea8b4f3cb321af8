"""The online planner: requests in, decisions out, each booking seen by the next.

It is the one planner behind `braid plan` and the reservation service: it
takes validated requests and returns typed decisions (`decisions.py`).
"""

from __future__ import annotations

from typing import Any

from braid.core.graph.search import widest_width
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.topology import Topology
from braid.core.model.units import format_volume
from braid.core.multipath import (
    MdiPolicy,
    SplitPlan,
    SplitRefusal,
    max_flow_value,
    split_earliest,
    split_fixed,
    split_max_bandwidth,
)
from braid.core.multipath.all_slots import split_all_slots
from braid.core.multipath.earliest import split_earliest_start
from braid.core.multipath.maxflow import flow_ceiling
from braid.core.planning.decisions import (
    Alternatives,
    Decision,
    Invalid,
    QuickestAnswer,
    Refused,
    Released,
    Reserved,
    SlotsAnswer,
    TenantReserved,
    VolumeReleased,
    VolumeReserved,
    WidestAnswer,
)
from braid.core.planning.refusals import (
    DelayImbalance,
    NoSinglePath,
    NoStart,
    NothingFree,
    TenantShort,
    TooLittle,
    VolumeShort,
    Why,
)
from braid.core.planning.requests import Release, Request
from braid.core.schedule import all_slots, earliest_start, fixed_path, widest
from braid.core.tenants import TenantAllocator, TenantRequest
from braid.core.volume import (
    BITS_PER_BYTE,
    VolumeAsk,
    VolumePlan,
    plan_volume,
    quickest_transfer,
)


class Planner:
    def __init__(self, topology: Topology, *, policy: MdiPolicy | None = None) -> None:
        self.network = Network(topology)
        self.tenants = TenantAllocator(self.network)
        self.policy = policy or MdiPolicy()
        self._tenant_ids: set[str] = set()
        self._volumes: dict[str, VolumeReserved] = {}
        self._staged: Booking | None = None

    def handle(self, item: Request | Release) -> Decision:
        """Decide and book: what this request books, the next one sees."""
        decision, staged = self.decide(item)
        if staged is not None:
            self.network.commit(staged)
        if isinstance(decision, VolumeReserved):
            self.commit_volume(decision)
        return decision

    def commit_volume(self, decision: VolumeReserved) -> None:
        """Book every step of a decided volume, or none (a step that does not fit undoes the rest).

        `decide` stages no booking for a volume: its steps are `decision.bookings`,
        and releasing the volume's id releases them all.
        """
        done: list[str] = []
        try:
            for booking in decision.bookings:
                self.network.commit(booking)
                done.append(booking.id)
        except BaseException:
            for booking_id in reversed(done):
                self.network.release(booking_id)
            raise
        self._volumes[decision.id] = decision

    @property
    def volumes(self) -> dict[str, VolumeReserved]:
        """The volume reservations booked, by id (their steps are in `network.bookings`)."""
        return self._volumes

    def decide(self, item: Request | Release) -> tuple[Decision, Booking | None]:
        """Decide without booking; the caller commits the returned booking when it may.

        A service that must first write the booking to a shared store uses
        this, and commits to the in-memory network only once the store agreed.
        Tenant requests and releases change the network directly.
        """
        self._staged = None
        if isinstance(item, Release):
            return self._release(item.id), None
        if item.id in self.network.bookings or item.id in self._volumes:
            return Invalid(item.id, "already names a booking; choose a new id", field="id"), None
        handler = {
            "fixed": self._fixed,
            "earliest": self._earliest,
            "max-bandwidth": self._max_bandwidth,
            "all-slots": self._all_slots,
            "tenant": self._tenant,
            "volume": self._volume,
            "quickest": self._quickest,
        }[item.mode]
        decision = handler(item)
        return decision, self._staged

    # -- the four queries -------------------------------------------------

    def _fixed(self, r: Request) -> Decision:
        if r.max_paths == 1:
            path = fixed_path(
                self.network, r.src, r.dst, r.bandwidth, r.start, r.end, symmetric=r.symmetric
            )
            if path is not None:
                return self._book(r, r.start, r.end, self._single(r, path, r.bandwidth))
            why: Why = NoSinglePath(r.src, r.dst, r.bandwidth, r.start, r.end)
        else:
            outcome = split_fixed(
                self.network, r.src, r.dst, r.bandwidth, r.start, r.end, **self._split_options(r)
            )
            if isinstance(outcome, SplitPlan):
                return self._book(r, r.start, r.end, outcome)
            # The refusal's best total is what `_widest_plan` would find in this window.
            return self._reject(
                r,
                _split_why(r, outcome, self.policy),
                r.start,
                r.end - r.start,
                widest=outcome.best_total,
            )
        return self._reject(r, why, r.start, r.end - r.start)

    def _earliest(self, r: Request) -> Decision:
        found = self._earliest_plan(r, r.duration, r.not_before, r.not_after)
        if found is not None:
            start, plan = found
            return self._book(r, start, start + r.duration, plan)
        why = NoStart(r.src, r.dst, r.bandwidth, r.duration, r.not_before, r.not_after)
        return self._reject(r, why, r.not_before, r.duration, earliest=False)

    def _max_bandwidth(self, r: Request) -> Decision:
        plan = self._widest_plan(r, r.start, r.end)
        if plan is None:
            return Refused(r.id, NothingFree(r.src, r.dst, r.start, r.end), max_bandwidth=0)
        granted = sum(a.bandwidth for a in plan.allocations)
        if r.reserve:
            return self._book(r, r.start, r.end, plan, max_bandwidth=granted)
        max_flow = plan.max_flow if r.max_paths > 1 else self._max_flow(r, r.start, r.end)
        return WidestAnswer(r.id, r.start, r.end, granted, plan.allocations, max_flow)

    def _all_slots(self, r: Request) -> Decision:
        where = (r.src, r.dst, r.bandwidth, r.duration, r.start, r.end - r.duration + 1)
        if r.max_paths == 1:
            slots = all_slots(self.network, *where, symmetric=r.symmetric)
        else:
            slots = split_all_slots(self.network, *where, **self._split_options(r))
        return SlotsAnswer(r.id, r.start, r.end, r.duration, r.bandwidth, slots)

    def _tenant(self, r: Request) -> Decision:
        outcome = self.tenants.allocate(
            TenantRequest(
                r.id, r.tenant, r.src, r.dst, r.bandwidth, r.start, r.end, r.main_path, r.symmetric
            )
        )
        for moved in outcome.reallocated:
            if not moved.allocations:  # a victim left with nothing is dropped
                self._tenant_ids.discard(moved.id)
        short = None
        if outcome.shortfall:
            short = TenantShort(
                r.tenant, r.src, r.dst, r.bandwidth, outcome.granted, r.start, r.end, outcome.joined
            )
        if outcome.booking is None:
            assert short is not None, "a tenant request booked nothing, yet is short of nothing"
            return Refused(r.id, short, tenant=r.tenant)
        self._tenant_ids.add(r.id)
        return TenantReserved(
            r.id, r.tenant, outcome.booking, outcome.shortfall, short, tuple(outcome.reallocated)
        )

    def _volume(self, r: Request) -> Decision:
        found = plan_volume(self.network, _volume_ask(r))
        if isinstance(found, VolumePlan):
            decision = VolumeReserved(r.id, found.profile, r.volume, r.symmetric)
            taken = [b.id for b in decision.bookings if b.id in self.network.bookings]
            if taken:
                # The steps are booked as `id~i`; another booking holds one of those names.
                reason = f"its step {taken[0]!r} would clash with a booking; choose a new id"
                return Invalid(r.id, reason, field="id")
            return decision
        why = VolumeShort(
            r.src,
            r.dst,
            r.volume,
            r.not_before,
            r.deadline,
            found.most_by_deadline // BITS_PER_BYTE,
            found.earliest_completion,
            found.reason,
        )
        return Refused(r.id, why)

    def _quickest(self, r: Request) -> Decision:
        found = quickest_transfer(self.network, _volume_ask(r))
        if found is None:
            said = (
                f"the {format_volume(r.volume)} asked can never all be moved "
                f"from {r.src} to {r.dst}: "
                "what is booked leaves nothing free between them for good"
            )
            why = VolumeShort(r.src, r.dst, r.volume, r.not_before, None, 0, None, said)
            return Refused(r.id, why)
        return QuickestAnswer(r.id, r.not_before, r.volume, found.profile)

    def _release(self, request_id: str) -> Decision:
        volume = self._volumes.pop(request_id, None)
        if volume is not None:
            for step in volume.bookings:
                self.network.release(step.id)
            return VolumeReleased(request_id, volume.profile)
        booking = self.network.bookings.get(request_id)
        if booking is None:
            return Invalid(request_id, "nothing is booked under this id", field="id")
        if request_id in self._tenant_ids:
            self.tenants.release(request_id)
            self._tenant_ids.discard(request_id)
        else:
            self.network.release(request_id)
        return Released(request_id, booking)

    # -- shared steps -------------------------------------------------------

    def _split_options(self, r: Request) -> dict[str, Any]:
        return {
            "max_paths": r.max_paths,
            "mode": r.split,
            "symmetric": r.symmetric,
            "policy": self.policy,
        }

    def _single(self, r: Request, path: Any, bandwidth: int) -> SplitPlan:
        return SplitPlan.single(Allocation(path, bandwidth), mode=r.split)

    def _earliest_plan(
        self,
        r: Request,
        duration: int,
        not_before: int,
        not_after: int | None,
    ) -> tuple[int, SplitPlan] | None:
        if r.max_paths > 1:
            return split_earliest(
                self.network,
                r.src,
                r.dst,
                r.bandwidth,
                duration,
                not_before,
                not_after,
                **self._split_options(r),
            )
        start = self._single_path_start(r, duration, not_before, not_after)
        if start is None:
            return None
        path = fixed_path(
            self.network,
            r.src,
            r.dst,
            r.bandwidth,
            start,
            start + duration,
            symmetric=r.symmetric,
        )
        assert path is not None, "earliest start found without a path"
        return start, self._single(r, path, r.bandwidth)

    def _earliest_start(self, r: Request, duration: int, not_before: int) -> int | None:
        """`_earliest_plan`'s start after a refusal at `not_before`, without working out a path."""
        if r.max_paths > 1:
            return split_earliest_start(
                self.network,
                r.src,
                r.dst,
                r.bandwidth,
                duration,
                not_before,
                **self._split_options(r),
            )
        return self._single_path_start(r, duration, not_before, None, refused_at_start=True)

    def _single_path_start(
        self,
        r: Request,
        duration: int,
        not_before: int,
        not_after: int | None,
        *,
        refused_at_start: bool = False,
    ) -> int | None:
        return earliest_start(
            self.network,
            r.src,
            r.dst,
            r.bandwidth,
            duration,
            not_before,
            not_after,
            symmetric=r.symmetric,
            refused_at_start=refused_at_start,
        )

    def _widest_plan(self, r: Request, start: int, end: int) -> SplitPlan | None:
        if r.max_paths > 1:
            return split_max_bandwidth(
                self.network, r.src, r.dst, start, end, **self._split_options(r)
            )
        found = widest(self.network, r.src, r.dst, start, end, symmetric=r.symmetric)
        if found is None:
            return None
        path, width = found
        return SplitPlan.single(Allocation(path, width), mode=r.split, max_flow=width)

    def _widest_width(self, r: Request, start: int, end: int) -> int:
        """What `_widest_plan` grants in all, without tracing its path when it has one path."""
        if r.max_paths > 1:
            plan = self._widest_plan(r, start, end)
            return sum(a.bandwidth for a in plan.allocations) if plan else 0
        view = self.network.window(start, end, symmetric=r.symmetric)
        view.prefetch()  # the widest path reads most links
        return widest_width(self.network.topology, r.src, r.dst, view.usable)

    def _max_flow(self, r: Request, start: int, end: int, *, at_least: int = 0) -> int:
        """The max-flow bound between the request's endpoints in [start, end).

        Below `at_least` it may be any lower value instead: a refusal only
        reports a bound that reaches the request, and a cut near either end
        often shows cheaply that it cannot.
        """
        topology = self.network.topology
        view = self.network.window(start, end, symmetric=r.symmetric)
        if at_least > 0:
            ceiling = flow_ceiling(
                topology, r.src, r.dst, view.usable, at_least, symmetric=r.symmetric
            )
            if ceiling < at_least:
                return ceiling
        return max_flow_value(topology, r.src, r.dst, view.usable, symmetric=r.symmetric)

    def _book(
        self, r: Request, start: int, end: int, plan: SplitPlan, max_bandwidth: int | None = None
    ) -> Decision:
        booking = Booking(r.id, start, end, plan.allocations, r.symmetric)
        self._staged = booking
        max_flow = plan.max_flow if r.max_paths > 1 else None
        return Reserved(r.id, booking, plan, max_flow, max_bandwidth)

    def _reject(
        self,
        r: Request,
        why: Why,
        start: int,
        duration: int,
        *,
        earliest: bool = True,
        widest: int | None = None,
    ) -> Decision:
        """A rejection that names the nearest alternatives the user could accept.

        `widest`, when the caller found it already, is the highest bandwidth
        the window offers over the request's paths.
        """
        earliest_start: int | None = None
        max_flow: int | None = None
        if earliest:
            # Only `_fixed` asks for it, for this very window, which it just saw refused.
            earliest_start = self._earliest_start(r, duration, start)
        if r.max_paths == 1 and r.mode == "fixed":
            bound = self._max_flow(r, start, start + duration, at_least=r.bandwidth)
            if bound >= r.bandwidth:
                max_flow = bound
        best = self._widest_width(r, start, start + duration) if widest is None else widest
        return Refused(r.id, why, Alternatives(best, earliest_start, max_flow))


def _volume_ask(r: Request) -> VolumeAsk:
    return VolumeAsk(
        r.src,
        r.dst,
        r.volume * BITS_PER_BYTE,
        r.not_before,
        r.deadline,
        r.max_rate,
        r.max_paths,
        r.objective,
        r.symmetric,
    )


def _split_why(r: Request, refusal: SplitRefusal, policy: MdiPolicy) -> Why:
    """A split refusal's facts as the planner's typed reason."""
    if refusal.blocked_mdi is not None:
        return DelayImbalance(
            r.src, r.dst, r.start, r.end, r.bandwidth, r.max_paths,
            policy.refuse_above, refusal.blocked_mdi,
        )  # fmt: skip
    return TooLittle(
        r.src, r.dst, r.start, r.end, r.bandwidth, refusal.best_total, refusal.max_flow,
        r.max_paths,
    )  # fmt: skip
