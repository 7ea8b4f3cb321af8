"""The reservation service: one way in for REST, CLI and every replica.

Admission plans in the replica's in-memory mirror, then writes through the
store, which locks the links involved and re-validates against every other
replica's bookings in the same transaction. A conflict means someone else
booked first: catch up and plan again.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from braid.app.errors import ForbiddenError, NotFoundError, PolicyError, RejectedError
from braid.app.ports import ChangeFeed, ConflictError, Filters, Repository
from braid.app.provisioning.ports import ProvisioningStore
from braid.app.records import AuditEntry, Reservation, User
from braid.app.request_context import request_detail
from braid.app.reservations.booking_policy import OwnerLocks, policy_violation
from braid.app.reservations.books import Books
from braid.app.reservations.commands import Modify, Reserve
from braid.app.reservations.group_commit import GroupCommit
from braid.app.reservations.idempotency import body_digest, same_request
from braid.app.reservations.mirror import Mirror
from braid.app.reservations.paging import decode_cursor, encode_cursor, page_limit
from braid.app.reservations.plan_facts import (
    kept_facts,
    plan_facts,
    protection_facts,
    protection_of,
)
from braid.app.reservations.ports import Metrics, NoMetrics
from braid.app.reservations.rejections import Refusal, RefusalMemo
from braid.app.reservations.requests_rest import readable_reason, to_request
from braid.app.reservations.results import Availability, Page, Seen
from braid.app.reservations.volume_changes import modified_volume
from braid.app.reservations.volumes import (
    VOLUME_KIND,
    is_volume,
    profile_plan,
    volume_note,
    volume_offers,
)
from braid.app.tokens import BearerTokens
from braid.core.errors import InputError
from braid.core.failover.protection import ProtectedPaths
from braid.core.failover.standby import Standby, standby_path
from braid.core.model.booking import Allocation, Booking
from braid.core.model.instants import format_instant, parse_instant
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.model.units import to_mbps
from braid.core.planning.decisions import Invalid, Refused, Reserved, VolumeReserved
from braid.core.planning.lifecycle import (
    BOOKED,
    State,
    check_transition,
    state_at,
)
from braid.core.planning.refusals import TenantShort, TooLittle, VolumeShort
from braid.core.planning.requests import Request
from braid.core.policy import Limits, Policy
from braid.core.provisioning.profile_steps import profile_paths
from braid.core.provisioning.status import Phase, Status


@dataclass(frozen=True, slots=True)
class Planned:
    """An admission's booking, the decision that made it, and the labels taken for it."""

    decision: Reserved
    booking: Booking
    labels: dict[str, list[int]]
    standby: Standby | None = None  # a protected booking's standby path


@dataclass(frozen=True, slots=True)
class PlannedVolume:
    """A volume admission's profile, and the labels taken for its paths (one VLAN each)."""

    decision: VolumeReserved
    labels: dict[str, list[int]]


def wall_clock() -> int:
    return int(time.time())


class ReservationService:
    def __init__(
        self,
        repo: Repository,
        *,
        clock: Callable[[], int] = wall_clock,
        hold_seconds: int = 600,
        metrics: Metrics | None = None,
        feed: ChangeFeed | None = None,
        provisioning: ProvisioningStore | None = None,
        policy: Policy | None = None,
        failback: bool = True,
    ) -> None:
        """`feed` (optional) tells the mirror of other replicas' changes; see `Mirror`.

        `failback`: a protected reservation moved to its standby by a link
        going down goes back to its primary when the link comes up.

        `provisioning` (when braid programs the switches) gives each
        reservation's provisioning state; `on_change` callbacks run after
        every booking change (the provisioner's loop wakes on them).
        """
        self.books = Books(repo, clock)
        self.feed = feed
        self.clock = clock
        self.hold_seconds = hold_seconds
        self.metrics: Metrics = metrics or NoMetrics()
        self.identities = BearerTokens(repo, clock)
        self.group = GroupCommit(repo, timed=self.metrics.store_time)
        self.refusals = RefusalMemo()
        self.provisioning = provisioning
        self.policy = policy or Policy()
        self.failback = failback
        self._owner_locks = OwnerLocks()

    # -- start-up --------------------------------------------------------------

    def start(self, initial_topology: Mapping[str, Any] | None = None) -> None:
        """Load the current topology (storing `initial_topology` if there is none yet).

        Starts the change feed too, if any; `stop` stops it.
        """
        stored = self.books.store.topology()
        if stored is None:
            if initial_topology is None:
                raise InputError(
                    "topology", "the store has no topology; start with --topology FILE"
                )
            topology_from_dict(initial_topology)  # validate before storing
            # Another replica starting at the same moment may store one first:
            # then this stores nothing and uses that one.
            stored = self.books.store.put_first_topology(
                initial_topology, now=self.clock(), actor="braid"
            )
        if self.feed is not None:
            self.feed.start()
        topology = topology_from_dict(stored.data)
        mirror = Mirror(self.books.store, topology, self.feed, timed=self.metrics.store_time)
        mirror.rebuild(self.clock())
        self.books.attach(mirror)

    def stop(self) -> None:
        """Stop the change feed; the mirror then reads the store before every decision."""
        if self.feed is not None:
            self.feed.stop()

    @property
    def _live(self) -> Mirror:
        return self.books.mirror

    @property
    def topology(self) -> Topology:
        return self.books.topology

    def stored_topology_version(self) -> int:
        """The topology version the store holds, asked of the store itself (0: none yet)."""
        return self.books.store.topology_version()

    @property
    def on_change(self) -> list[Callable[[], None]]:
        """Callbacks run after every booking change (the provisioner's loop wakes on them)."""
        return self.books.on_change

    # -- reservations ------------------------------------------------------------

    def reserve(self, user: User, command: Reserve) -> Seen:
        """Book `command`; with an Idempotency-Key already used by this owner for the
        same body, the reservation that key made (`Seen.replayed`), booking nothing."""
        if user.role == "monitor":
            raise ForbiddenError("a monitor's token may only set link states")
        first = self._keyed(user, command)
        if first is not None:
            return first
        limits = self.policy.limits_for(user.name, user.role)
        # A quota counts the owner's other bookings: admit one at a time per owner.
        with self._owner_locks.held(user.name, limits.counts_others):
            return self._reserve(user, command, limits)

    def _keyed(self, user: User, command: Reserve) -> Seen | None:
        """The reservation `command`'s key already made, or None (no key, or unused)."""
        if command.key is None:
            return None
        found = self.books.store.keyed(user.name, command.key)
        if found is None:
            return None
        same_request(command.key, found.request_digest, body_digest("reserve", command.body))
        return replace(self._seen(found, self.clock()), replayed=True)

    def _reserve(self, user: User, command: Reserve, limits: Limits) -> Seen:
        body, hold, protect = command.body, command.hold, command.protect
        started = time.perf_counter()

        def attempt(now: int, refused: bool) -> Seen:
            asked = time.monotonic()
            with self._live.lock:
                # Any store read begun after this attempt began will do: under
                # load, one read serves every admission waiting here. After
                # the store refused a write, read it even if the change feed
                # has not heard of the change that got there first yet.
                self._live.catch_up(now, fresh_since=asked, read=refused)
                request = to_request(
                    body, command.id or new_id(), self.topology, now, booking=True, zone=user.tz
                )
                planned = self._admit(request, body, protect)
            if isinstance(planned, Refusal):
                self.metrics.rejected(planned.kind, time.perf_counter() - started)
                raise RejectedError(planned.reason, planned.offers)
            record = self._record(user, request, planned, hold, now)
            record = replace(record, plan={**record.plan, "policing": command.policing.value})
            if command.key is not None:  # stored in the row, so in the booking's transaction
                digest = body_digest("reserve", body)
                record = replace(record, idempotency_key=command.key, request_digest=digest)
            try:
                self._check_policy(limits, record, now)
                step = self.books.write_step(record, "created", note=volume_note(record))
                stored = self.group.write(step, user.name, now)
            except ConflictError:
                self._live.return_labels(request.id)
                first = self._keyed(user, command)  # the same key, booked meanwhile elsewhere
                if first is not None:
                    return first
                raise  # another replica got there first: plan again
            except BaseException:
                self._live.return_labels(request.id)
                raise
            self._live.learn(stored, now)
            self.metrics.admitted(time.perf_counter() - started)
            self.books.changed()
            return self._seen(stored, now)

        return self.books.retry(attempt, "too many concurrent bookings on these links; try again")

    def _plan(
        self, request: Request, body: Mapping[str, Any]
    ) -> tuple[Reserved, Booking] | Refusal:
        """The booking the mirror finds for `request`, or the refusal with its offers.

        Called under the mirror's lock. A refusal is remembered until the
        network changes, so the same request asked again meanwhile skips
        the search for alternatives.
        """
        network = self._live.network
        # The network itself, not its id: a rebuilt mirror's new network
        # never matches, even if it were given the old one's address.
        state = (network, network.version)
        known = self.refusals.get(state, request, body)
        if known is not None:
            return known
        decision, booking = self._live.planner.decide(request)
        if booking is not None:
            assert isinstance(decision, Reserved), "a booking comes with a Reserved decision"
            return decision, booking
        if not isinstance(decision, Refused | Invalid):
            raise AssertionError(f"a booking request answered with {decision!r}")
        offers = (
            tuple(self._offers(body, request, decision)) if isinstance(decision, Refused) else ()
        )
        refusal = Refusal(_refusal_kind(decision), readable_reason(decision), offers)
        self.refusals.put(state, request, body, refusal)
        return refusal

    def _admit(
        self, request: Request, body: Mapping[str, Any], protect: bool
    ) -> Planned | PlannedVolume | Refusal:
        """The booking planned for `request` (with its standby, if `protect`) and its labels."""
        if request.mode == "volume":
            return self._admit_volume(request, body, protect)
        found = self._plan(request, body)
        if isinstance(found, Refusal):
            return found
        decision, booking = found
        standby = self._standby(request, booking) if protect else None
        if isinstance(standby, Refusal):
            return standby
        return self._label(request, decision, booking, standby)

    def _admit_volume(
        self, request: Request, body: Mapping[str, Any], protect: bool
    ) -> PlannedVolume | Refusal:
        """A volume's profile, booked step by step once the store takes it, with a VLAN per
        path it uses over its whole window (a path keeps its VLAN from step to step)."""
        if protect:
            raise InputError("protect", "a volume reservation has no standby path yet")
        decision, _ = self._live.planner.decide(request)
        if isinstance(decision, VolumeReserved):
            profile = decision.profile
            paths = [p.links for p in profile_paths(profile)]
            labels = self._live.take_path_labels(request.id, (profile.start, profile.end), paths)
            if isinstance(labels, str):
                return Refusal("labels", labels, ())
            return PlannedVolume(decision, labels)
        if not isinstance(decision, Refused | Invalid):
            raise AssertionError(f"a volume request answered with {decision!r}")
        offers = tuple(volume_offers(body, decision)) if isinstance(decision, Refused) else ()
        return Refusal(_refusal_kind(decision), readable_reason(decision), offers)

    def _standby(self, request: Request, booking: Booking) -> Standby | Refusal:
        """A standby path around `booking`'s primary, or why there is none.

        Called under the mirror's lock. The primary is booked in the mirror
        while the standby is sought, so a link both share must have room for
        both: the standby's capacity is reserved for it alone.
        """
        network = self._live.network
        primary = booking.allocations[0].path
        network.commit(booking)
        try:
            window = network.window(booking.start, booking.end, symmetric=booking.symmetric)
            found = standby_path(self.topology, primary, window.usable, booking.bandwidth)
        finally:
            network.release(booking.id)
        if found is None:
            reason = (
                f"no standby path from {request.src} to {request.dst} other than the primary "
                f"has {to_mbps(booking.bandwidth):g} Mbit/s free for the window"
            )
            return Refusal("no_path", reason, ())
        return found

    def _label(
        self, request: Request, decision: Reserved, booking: Booking, standby: Standby | None = None
    ) -> Planned | Refusal:
        """The planned booking with its VLANs and group ids, taken in the mirror's calendar."""
        both = booking
        if standby is not None:
            extra = Allocation(standby.path, booking.bandwidth)
            both = replace(booking, allocations=(*booking.allocations, extra))
        labels = self._live.take_labels(request.id, both, protected=standby is not None)
        if isinstance(labels, str):
            return Refusal("labels", labels, ())
        return Planned(decision, booking, labels, standby)

    def get(self, user: User, reservation_id: str) -> Seen:
        return self._seen(self._visible(user, reservation_id), self.clock())

    def find(self, user: User, query: Mapping[str, Any]) -> Page:
        """One page of the reservations the caller may see, by start then id.

        Pass `after=page.next` for the next page. The state filter is the
        states at the service's `now`, applied by the store's query, so a
        page holds `limit` rows whenever `next` is set, and `next` is set
        only when more rows match.
        """
        owner = query.get("owner")
        if user.role != "operator":
            if owner not in (None, user.name):
                return Page((), None)
            owner = user.name
        limit = page_limit(query.get("limit"))
        now = self.clock()
        filters = Filters(
            owner=owner,
            states=_states(query.get("state")),
            at=now,
            start=self._instant(query, "start", user, now),
            end=self._instant(query, "end", user, now),
            # One row more than the page: whether it is there says if another page follows.
            limit=limit + 1,
            after=decode_cursor(query["after"]) if query.get("after") else None,
        )
        rows = self.books.store.find(filters)
        page = rows[:limit]
        more = len(rows) > limit
        return Page(tuple(self._seen_all(page, now)), encode_cursor(page[-1]) if more else None)

    def audit(self, user: User, reservation_id: str) -> list[AuditEntry]:
        self._visible(user, reservation_id)
        return list(self.books.store.audit(reservation_id))

    def cancel(self, user: User, reservation_id: str) -> Seen:
        return self._move(user, reservation_id, State.CANCELLED, "cancelled by " + user.name)

    def confirm(self, user: User, reservation_id: str, key: str | None = None) -> Seen:
        """Turn a hold into a reservation, re-validated like a new booking.

        A replica whose clock ran ahead may already have stopped counting the
        hold and booked its bandwidth; re-validating makes that a conflict
        rather than an overbooked link. With an Idempotency-Key `key`, the
        confirm's audit entry keeps it: the same confirm sent again with it
        gets the reservation (`replayed`) instead of a refused transition.
        """
        now = self.clock()
        held = self._visible(user, reservation_id)
        if key is not None and self._confirmed_with(reservation_id, key):
            return replace(self._seen(held, now), replayed=True)
        state = state_at(held.state, held.start, held.end, now, held.hold_expires_at)
        check_transition(state, State.RESERVED)
        confirmed = replace(held, state=State.RESERVED, hold_expires_at=None, updated_at=now)
        note = {} if key is None else {"idempotency_key": key}
        try:
            stored = self.books.write_record(
                confirmed, user.name, "confirmed", now, expected=held.version, note=note
            )
        except ConflictError as exc:
            if key is not None and self._confirmed_with(reservation_id, key):
                return replace(self._seen(self._visible(user, reservation_id), now), replayed=True)
            raise RejectedError(f"the hold can no longer be confirmed: {exc}") from exc
        self.books.changed()
        return self._seen(stored, now)

    def _confirmed_with(self, reservation_id: str, key: str) -> bool:
        return any(
            e.action == "confirmed" and e.detail.get("idempotency_key") == key
            for e in self.books.store.audit(reservation_id)
        )

    def modify(self, user: User, reservation_id: str, change: Modify) -> Seen:
        """Make-before-break: the new booking is validated and swapped in one transaction.

        A volume keeps what its profile carried before now, and the rest is
        planned again to the (new) deadline (see `volume_changes`).

        The new booking must keep to the caller's policy limits (an operator
        acting for a user acts under the operator's own).
        """
        limits = self.policy.limits_for(user.name, user.role)
        with self._owner_locks.held(user.name, limits.counts_others):
            return self._modify(user, reservation_id, change, limits)

    def _modify(self, user: User, reservation_id: str, change: Modify, limits: Limits) -> Seen:
        def attempt(now: int, refused: bool) -> Seen:
            old = self._visible(user, reservation_id)
            _require_booked(old, now)
            _check_modifiable(old, change)
            # Plan on what other replicas booked too, as an admission does;
            # after a refused write, read the store whatever the feed says.
            self._live.catch_up(now, read=refused)
            if is_volume(old):
                new = modified_volume(self._live, old, change, now)
            else:
                new = self._replan(old, change, now)
            try:
                self._check_policy(limits, new, now)
                stored = self.books.write_record(
                    new, user.name, "modified", now, expected=old.version, note=volume_note(new)
                )
            except BaseException:  # a conflict too: plan again on a fresher view
                self._live.restore_labels(old)
                raise
            self.books.changed()
            return self._seen(stored, now)

        return self.books.retry(attempt, "the reservation kept changing under us; try again")

    def availability(self, user: User, query: Mapping[str, Any]) -> Availability:
        # any authenticated user may ask; their tz setting reads local times
        now = self.clock()
        with self._live.lock:
            self._live.catch_up(now)
            request = to_request(
                query, "availability", self.topology, now, booking=False, zone=user.tz
            )
            decision, _ = self._live.planner.decide(request)  # decide() books nothing
        return Availability(decision, request)

    # -- shared steps ----------------------------------------------------------------

    def _check_policy(self, limits: Limits, record: Reservation, now: int) -> None:
        """Raise PolicyError naming the first rule `record` (as it would be stored) breaks."""
        broken = policy_violation(self.books.store, limits, record, now)
        if broken is not None:
            self.metrics.rejected("policy", 0.0)
            raise PolicyError(broken.rule, broken.message)

    def _record(
        self,
        user: User,
        request: Request,
        planned: Planned | PlannedVolume,
        hold: bool,
        now: int,
    ) -> Reservation:
        if isinstance(planned, PlannedVolume):
            return self._volume_record(user, request, planned, hold, now)
        booking = planned.booking
        plan = {**plan_facts(planned.decision), **planned.labels}
        if planned.standby is not None:
            paths = ProtectedPaths(booking.allocations[0].path, planned.standby.path)
            plan["protection"] = protection_facts(paths, planned.standby.shared)
        return self._new_record(
            user, request, hold, now,
            start=booking.start, end=booking.end, allocations=booking.allocations,
            symmetric=booking.symmetric, request=_request_echo(request), plan=plan,
        )  # fmt: skip

    def _volume_record(
        self, user: User, request: Request, planned: PlannedVolume, hold: bool, now: int
    ) -> Reservation:
        profile = planned.decision.profile
        return self._new_record(
            user, request, hold, now,
            start=profile.start, end=profile.end, allocations=(), symmetric=request.symmetric,
            kind=VOLUME_KIND, request=_volume_echo(request),
            plan={**profile_plan(profile, planned.decision.volume), **planned.labels},
        )  # fmt: skip

    def _new_record(
        self, user: User, asked: Request, hold: bool, now: int, **booked: Any
    ) -> Reservation:
        """A new reservation of `user`'s, held or booked at `now`, with what was planned."""
        return Reservation(
            id=asked.id,
            token=secrets.token_urlsafe(24),
            owner=user.name,
            state=State.HELD if hold else State.RESERVED,
            src=asked.src,
            dst=asked.dst,
            hold_expires_at=now + self.hold_seconds if hold else None,
            created_at=now,
            updated_at=now,
            **booked,
        )

    def _seen(self, record: Reservation, now: int) -> Seen:
        return self._seen_all([record], now)[0]

    def _seen_all(self, records: Sequence[Reservation], now: int) -> list[Seen]:
        """Records as seen at `now`, with their provisioning state when braid provisions."""
        if self.provisioning is None:
            return [Seen(r, now) for r in records]
        known = self.provisioning.statuses([r.id for r in records])
        return [Seen(r, now, known.get(r.id) or _not_provisioned(r, now)) for r in records]

    def _visible(self, user: User, reservation_id: str) -> Reservation:
        found = self.books.store.get(reservation_id)
        if found is None:
            raise NotFoundError(f"no reservation {reservation_id!r}")
        if user.role != "operator" and found.owner != user.name:
            raise ForbiddenError("this reservation belongs to another user")
        return found

    def _move(self, user: User, reservation_id: str, state: State, why: str) -> Seen:
        now = self.clock()
        current = self._visible(user, reservation_id)
        effective = state_at(
            current.state, current.start, current.end, now, current.hold_expires_at
        )
        check_transition(effective, state)
        detail = {"why": why, **request_detail()}
        stored = self.books.store.set_state(
            reservation_id, state, now=now, actor=user.name, detail=detail
        )
        self._live.catch_up(now)
        self.books.changed()
        return self._seen(stored, now)

    def _replan(self, old: Reservation, change: Modify, now: int) -> Reservation:
        end = old.end if change.end is None else change.end
        bandwidth = old.bandwidth if change.bandwidth is None else change.bandwidth
        start = max(old.start, now)  # an active booking changes from now on
        if end <= start:
            raise InputError("end", f"must be after {format_instant(start)}")
        replanned = self._live.replan(old, start, end, bandwidth)
        if isinstance(replanned, str):
            raise RejectedError(replanned)
        request = {**old.request, "end": format_instant(end), "bandwidth": bandwidth / 10**6}
        return replace(
            old,
            start=start,
            end=end,
            allocations=replanned.allocations,
            plan=kept_facts(old.plan, replanned.plan),
            request=request,
            updated_at=now,
        )

    @staticmethod
    def _instant(query: Mapping[str, Any], name: str, user: User, now: int) -> int | None:
        """An optional instant of a query, read in the user's zone."""
        if not query.get(name):
            return None
        return parse_instant(query[name], name, zone=user.tz, now=now)

    def _offers(
        self, body: Mapping[str, Any], request: Request, refused: Refused
    ) -> list[dict[str, Any]]:
        """Alternatives as ready-to-post bodies, so accepting one is a single request."""
        offers: list[dict[str, Any]] = []
        found = refused.alternatives
        if found is None:
            return offers
        split = found.max_flow is not None
        base = {k: v for k, v in body.items() if k != "max_paths" or not split}
        if found.earliest_start is not None and "start" in body and "end" in body:
            span = request.end - request.start  # as read: in the caller's zone, at their now
            start = found.earliest_start
            offers.append(
                {
                    "kind": "earliest_start",
                    "body": {
                        **base,
                        "start": format_instant(start),
                        "end": format_instant(start + span),
                    },
                }
            )
        if found.max_bandwidth:
            offers.append(
                {
                    "kind": "max_bandwidth",
                    "body": {**base, "bandwidth": to_mbps(found.max_bandwidth)},
                }
            )
        if split:
            offers.append({"kind": "split", "body": {**base, "max_paths": 4}})
        return offers


def _not_provisioned(r: Reservation, now: int) -> Status | None:
    """What a reservation no provisioning pass has touched yet shows: scheduled while
    it is booked, nothing once it is over."""
    state = state_at(r.state, r.start, r.end, now, r.hold_expires_at)
    return Status(Phase.SCHEDULED, since=r.created_at) if state in BOOKED else None


def new_id() -> str:
    """A fresh reservation id (callers that must know it before booking pass it in `Reserve`)."""
    return "r-" + secrets.token_hex(6)


def _states(value: object) -> frozenset[State] | None:
    if value in (None, ""):
        return None
    names = str(value).split(",")
    try:
        return frozenset(State(n.strip()) for n in names)
    except ValueError as exc:
        known = ", ".join(s.value for s in State)
        raise InputError("state", f"unknown state in {value!r}; known: {known}") from exc


def _check_modifiable(r: Reservation, change: Modify) -> None:
    """Refuse, naming the field, a change this kind of reservation cannot take."""
    if protection_of(r.plan) is not None:
        raise InputError(
            "protect", "a protected reservation cannot be modified yet; cancel it and book again"
        )
    if change.of_volume and not is_volume(r):
        field = next(iter(change.sent()))
        raise InputError(field, f"only a volume reservation has a {field!r} to change")


def _require_booked(r: Reservation, now: int) -> None:
    state = state_at(r.state, r.start, r.end, now, r.hold_expires_at)
    if state not in BOOKED:
        raise InputError("state", f"a {state.value} reservation cannot be modified")


def _refusal_kind(decision: Refused | Invalid) -> str:
    """The refusal's kind as the metrics count it: only some of what was asked fits
    ("capacity"), or none of it ("no_path"), or the request is not valid."""
    if isinstance(decision, Invalid):
        return "invalid"
    why = decision.why
    some = (
        (isinstance(why, TooLittle) and why.bound > 0)
        or isinstance(why, TenantShort)
        or (isinstance(why, VolumeShort) and why.most_by_deadline > 0)
    )
    return "capacity" if some else "no_path"


def _volume_echo(request: Request) -> dict[str, Any]:
    echo: dict[str, Any] = {
        "mode": request.mode,
        "volume": request.volume,
        "not_before": format_instant(request.not_before),
        "objective": request.objective,
        "max_paths": request.max_paths,
    }
    if request.deadline is not None:
        echo["deadline"] = format_instant(request.deadline)
    if request.max_rate is not None:
        echo["max_rate"] = to_mbps(request.max_rate)
    return echo


def _request_echo(request: Request) -> dict[str, Any]:
    return {"mode": request.mode, "max_paths": request.max_paths, "split": request.split}
