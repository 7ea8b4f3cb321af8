"""The in-memory timelines of one replica, kept in step with the shared store.

Every replica plans against its own mirror, so planning is fast; the store
has the last word at write time. The mirror catches up from the store's
change cursor before each decision, which is how replicas learn each
other's bookings. With a change feed (PostgreSQL's LISTEN/NOTIFY) it reads
the store only when the feed has heard of a change it has not learnt;
without one, or while the feed is not listening, it reads before every
decision.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from braid.app.ports import ChangeFeed, FeedNews, Repository
from braid.app.records import Reservation
from braid.app.reservations.plan_facts import (
    Replanned,
    booked_allocations,
    fixed_request,
    labels_of,
    link_lists,
    plan_facts,
)
from braid.app.reservations.volumes import is_volume, profile_of, step_bookings
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.timeline import OverbookingError
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.multipath import proportional_shares
from braid.core.planning.decisions import Reserved, reason_of
from braid.core.planning.lifecycle import counts_against_capacity
from braid.core.planning.planner import Planner
from braid.core.provisioning.profile_steps import profile_paths
from braid.core.rules.calendar import LabelCalendar, NoFreeLabelError
from braid.core.rules.compiler import group_count
from braid.core.volume.profile import Profile, step_booking_id

log = logging.getLogger(__name__)
# Forgetting a learnt write only makes catch-up apply it again, harmlessly.
_LEARNED_LIMIT = 10_000
# With a change feed, the store is still read at least this often (seconds):
# the bound on a stale view should notifications stop without the listener
# noticing (a silently dead connection, a starved thread).
READ_AT_LEAST_EVERY: Final = 1.0


def as_booking(reservation: Reservation) -> Booking:
    """What `reservation` books: its paths, and a protected one's standby too."""
    return Booking(
        reservation.id,
        reservation.start,
        reservation.end,
        booked_allocations(reservation.allocations, reservation.plan),
        reservation.symmetric,
    )


def as_bookings(reservation: Reservation) -> tuple[Booking, ...]:
    """What `reservation` books: one booking, or a volume's one per step (`id~i`)."""
    return step_bookings(reservation) if is_volume(reservation) else (as_booking(reservation),)


def label_paths(reservation: Reservation) -> list[tuple[str, ...]]:
    """The link lists a reservation's labels go with, one VLAN each (a volume's every path)."""
    profile = profile_of(reservation)
    if profile is not None:
        return profile_links(profile)
    return link_lists(as_booking(reservation).allocations)


def profile_links(profile: Profile) -> list[tuple[str, ...]]:
    """Every path of a volume's profile as a link list, one VLAN each (see `profile_paths`)."""
    return [p.links for p in profile_paths(profile)]


def held_bookings(network: Network, reservation_id: str) -> tuple[Booking, ...]:
    """The bookings `network` holds for a reservation: itself, or a volume's steps."""
    booking = network.bookings.get(reservation_id)
    if booking is not None:
        return (booking,)
    steps: list[Booking] = []
    while (step := network.bookings.get(step_booking_id(reservation_id, len(steps)))) is not None:
        steps.append(step)
    return tuple(steps)


def commit_all(network: Network, bookings: Iterable[Booking]) -> None:
    """Book all of `bookings` or none: a volume's steps go in together."""
    done: list[str] = []
    try:
        for booking in bookings:
            network.commit(booking)
            done.append(booking.id)
    except BaseException:
        for booking_id in reversed(done):
            network.release(booking_id)
        raise


class Mirror:
    """One replica's timelines, and how far into the store's changes they reach.

    How stale can they be? Without a listening feed, not at all: every
    decision reads the store's changes first. With one, a change another
    replica commits is read by the first catch-up after its notification
    arrives (PostgreSQL sends it at commit; the listener records it as soon
    as it comes, typically well under a millisecond later on one host), and
    in any case by the first catch-up begun `read_every` seconds (1 s) after
    the previous read. So a request is never refused on a view older than
    that second; a write planned on a stale view is refused by the store,
    and the retry reads the store first.
    """

    def __init__(
        self,
        repo: Repository,
        topology: Topology,
        feed: ChangeFeed | None = None,
        *,
        read_every: float = READ_AT_LEAST_EVERY,
        timed: Callable[[str, float], None] | None = None,
    ) -> None:
        """`timed("read", seconds)` is told how long each read of the store's changes took."""
        self.repo = repo
        self.timed = timed
        self.feed = feed
        self.read_every = read_every
        # The feed's epoch when the last store read began; None: not listening then.
        self._epoch: int | None = None
        self.lock = threading.RLock()
        self.topology = topology
        self.topology_version = 0
        self.planner = Planner(topology)
        self.labels = LabelCalendar.of(topology)
        self.cursor = 0
        self._topology_checked = 0.0
        self._caught_up_at = float("-inf")  # when the last catch-up began (monotonic)
        # Bookings the store holds that the mirror could not take yet.
        self.waiting: dict[str, Reservation] = {}
        # This replica's own writes the mirror took at once (id -> version):
        # catch-up skips them when it reads them back unchanged.
        self._learned: dict[str, int] = {}

    @property
    def network(self) -> Network:
        return self.planner.network

    @property
    def last_read(self) -> float:
        """When (time.monotonic) the last read of the store's changes began."""
        return self._caught_up_at

    def unapplied(self) -> int:
        """Store changes past the cursor that this mirror has neither read nor made itself."""
        with self.lock:
            changed, _ = self.repo.changes_since(self.cursor)
            return sum(1 for c in changed if self._learned.get(c.id) != c.version)

    def rebuild(self, now: int) -> None:
        """Start over from the store: its topology and every booking still taking bandwidth."""
        with self.lock:
            self._begin_read()
            cursor = self.repo.cursor()
            stored = self.repo.topology()
            if stored is not None and stored.version != self.topology_version:
                self.topology = topology_from_dict(stored.data)
                self.topology_version = stored.version
            self.planner = Planner(self.topology)
            self.labels = LabelCalendar.of(self.topology)
            self.cursor = cursor
            self.waiting = {}
            self._learned = {}
            self._apply(self.repo.booked(), now, rebuilding=True)

    def catch_up(self, now: int, *, fresh_since: float | None = None, read: bool = False) -> None:
        """Apply the store's changes past the cursor.

        With `fresh_since` (a `time.monotonic()` value), a store read that
        began at or after it is recent enough and the store is not read again.
        With a listening change feed the store is read only when the feed
        knows of a change past the cursor that this mirror has not learnt
        (see the class's note on staleness); `read` asks for a read anyway,
        e.g. after the store refused a write planned here.
        """
        with self.lock:
            if fresh_since is not None and self._caught_up_at >= fresh_since:
                return
            # After a refused write, look for a new topology at once: the
            # refusal may say the topology moved (e.g. a link went down).
            if self._topology_moved(at_once=read):
                self.rebuild(now)
                return
            if not read and self._nothing_to_read():
                return
            self._begin_read()
            changed, cursor = self.repo.changes_since(self.cursor)
            if self.timed is not None:
                self.timed("read", time.monotonic() - self._caught_up_at)
            self.cursor = max(self.cursor, cursor)
            changed = [c for c in changed if self._learned.pop(c.id, None) != c.version]
            retry = [r for r in self.waiting.values() if r.id not in {c.id for c in changed}]
            self._apply([*retry, *changed], now)

    def _begin_read(self) -> None:
        """Note when (and under which feed epoch) a read of the store begins."""
        self._caught_up_at = time.monotonic()
        news = None if self.feed is None else self.feed.news(self.cursor)
        self._epoch = None if news is None else news.epoch

    def _nothing_to_read(self) -> bool:
        """True when the feed vouches that every change past the cursor is learnt already.

        Then the cursor moves past them without reading the store. It cannot
        vouch while not listening, nor before a read under its current epoch
        (notifications sent while it was disconnected are lost).
        """
        if self.feed is None or self.waiting:
            return False
        if time.monotonic() - self._caught_up_at >= self.read_every:
            return False
        news = self.feed.news(self.cursor)
        if news is None or news.epoch != self._epoch:
            return False
        learnt = self._learnt_through(news)
        if learnt is None:
            return False
        for reservation_id in learnt:
            self._learned.pop(reservation_id, None)
        self.cursor = max(self.cursor, news.latest)
        return True

    def _learnt_through(self, news: FeedNews) -> list[str] | None:
        """The ids written past the cursor up to `news.latest`, if this mirror learnt them all."""
        ids: list[str] = []
        for seq in range(self.cursor + 1, news.latest + 1):
            pairs = news.written.get(seq)
            if pairs is None:
                return None  # another replica's change, or one not learnt here
            for reservation_id, version in pairs:
                if self._learned.get(reservation_id) != version:
                    return None
                ids.append(reservation_id)
        return ids

    def learn(self, stored: Reservation, now: int) -> None:
        """Take a change this replica has just written, without reading the store.

        If the mirror cannot take it (it lags the store), nothing is lost:
        the change is past the cursor, so the next `catch_up` reads it.
        """
        with self.lock:
            network = self.planner.network
            held = held_bookings(network, stored.id)
            if held:
                self._drop(stored.id)
            if not counts_against_capacity(stored.state, stored.end, now, stored.hold_expires_at):
                return
            try:
                self._hold(stored)
            except (OverbookingError, KeyError):
                commit_all(network, held)
                return
            if len(self._learned) >= _LEARNED_LIMIT:
                self._learned.clear()  # entries a catch-up read first linger; forget them
            self._learned[stored.id] = stored.version

    def _apply(
        self, reservations: Iterable[Reservation], now: int, *, rebuilding: bool = False
    ) -> None:
        network = self.planner.network
        for reservation in reservations:
            self.waiting.pop(reservation.id, None)
            if held_bookings(network, reservation.id):
                self._drop(reservation.id)
            if not counts_against_capacity(
                reservation.state, reservation.end, now, reservation.hold_expires_at
            ):
                continue
            try:
                self._hold(reservation)
            except (OverbookingError, KeyError) as exc:
                # The store validated this booking, so the mirror is what is
                # stale: say, a hold whose expiry this replica's clock has not
                # reached yet. Rebuild once; what still does not fit waits
                # (the mirror then undercounts, and the store, which always
                # re-validates, refuses what would not fit).
                if rebuilding:
                    self.waiting[reservation.id] = reservation
                    continue
                log.warning("mirror out of step (%s); rebuilding from the store", exc)
                self.rebuild(now)
                return

    def _hold(self, r: Reservation) -> None:
        """Book `r` in the network, and its labels (if it has any) in the calendar."""
        if is_volume(r):
            commit_all(self.planner.network, step_bookings(r))
            labels = labels_of(r.plan)
            if labels is not None:
                self.labels.record(r.id, (r.start, r.end), label_paths(r), labels)
            return
        booking = as_booking(r)
        self.planner.network.commit(booking)
        labels = labels_of(r.plan)
        if labels is not None:
            self.labels.record(r.id, (r.start, r.end), link_lists(booking.allocations), labels)

    def _drop(self, reservation_id: str) -> None:
        network = self.planner.network
        for booking in held_bookings(network, reservation_id):
            network.release(booking.id)
        self.labels.release(reservation_id)

    def take_labels(
        self, owner: str, booking: Booking, *, protected: bool = False
    ) -> dict[str, list[int]] | str:
        """VLANs (one per path) and group ids for `booking`, noted at once as taken.

        A `protected` booking's last allocation is its standby path: it gets
        a VLAN, and the rules a fast-failover group per path and direction.

        Noting them before the store has the booking keeps concurrent
        admissions on this replica from taking the same ones; `return_labels`
        gives them back if the write does not happen. Returns why not, when a
        path has no VLAN left for the window.
        """
        window = (booking.start, booking.end)
        return self.take_path_labels(owner, window, link_lists(booking.allocations), protected)

    def take_path_labels(
        self,
        owner: str,
        window: tuple[int, int],
        paths: Sequence[tuple[str, ...]],
        protected: bool = False,
    ) -> dict[str, list[int]] | str:
        """`take_labels` for paths given as link lists (a volume's, over its whole window)."""
        with self.lock:
            try:
                groups = group_count(len(paths) - protected, protected)
                assigned = self.labels.assign(owner, window, paths, groups)
            except NoFreeLabelError as exc:
                return str(exc)
            self.labels.record(owner, window, paths, assigned)
        return {"vlans": list(assigned.vlans), "group_ids": list(assigned.group_ids)}

    def return_labels(self, owner: str) -> None:
        """Forget labels taken for a booking the store did not take."""
        with self.lock:
            if owner not in self.planner.network.bookings:
                self.labels.release(owner)

    def _topology_moved(self, *, at_once: bool = False) -> bool:
        """Look for a new topology version at most once a second (unless `at_once`).

        Missing one for that second costs no safety: the store refuses writes
        validated against an older version.
        """
        moment = time.monotonic()
        if not at_once and moment - self._topology_checked < 1.0:
            return False
        self._topology_checked = moment
        return self.repo.topology_version() not in (0, self.topology_version)

    def replan(self, old: Reservation, start: int, end: int, bandwidth: int) -> Replanned | str:
        """New allocations for `old` over [start, end) at `bandwidth`, or why not.

        The old booking is set aside while planning (it is being replaced),
        then put back: the mirror changes only once the store agrees.
        """
        with self.lock:
            network = self.planner.network
            held = network.bookings.get(old.id)
            if held is not None:
                network.release(old.id)
            try:
                replanned = self._replan_free(old, start, end, bandwidth)
            finally:
                if held is not None:
                    network.commit(held)
            if isinstance(replanned, str):
                return replanned
            labels = self.relabel(old, start, end, replanned.allocations)
            if isinstance(labels, str):
                return labels
            return Replanned(replanned.allocations, {**replanned.plan, **labels})

    def relabel(
        self, old: Reservation, start: int, end: int, allocations: tuple[Allocation, ...]
    ) -> dict[str, list[int]] | str:
        """Labels for `old`'s new booking, noted as taken: its own where they stay free.

        A path kept with its VLAN spares the switches a change; a new path,
        or one whose VLAN someone else holds in the new window, gets a new one.
        """
        paths = link_lists(allocations)
        return self.relabel_paths(old, (start, end), paths, paths == link_lists(old.allocations))

    def relabel_paths(
        self, old: Reservation, window: tuple[int, int], paths: list[tuple[str, ...]], same: bool
    ) -> dict[str, list[int]] | str:
        """`relabel` for paths given as link lists (a volume's, over its whole window);
        `same`: they are the paths `old`'s labels go with."""
        kept = labels_of(old.plan) if same else None
        if kept is None or self.labels.clashes(old.id, window, paths, kept):
            try:
                # As someone else: new labels must differ from the old ones too, or the
                # switches could not hold both plans while one replaces the other.
                successor = f"{old.id}+"
                kept = self.labels.assign(successor, window, paths, group_count(len(paths), False))
            except NoFreeLabelError as exc:
                return str(exc)
        self.labels.record(old.id, window, paths, kept)
        return {"vlans": list(kept.vlans), "group_ids": list(kept.group_ids)}

    def restore_labels(self, old: Reservation) -> None:
        """After a modification the store refused: `old`'s labels are its own again."""
        with self.lock:
            labels = labels_of(old.plan)
            held = bool(held_bookings(self.planner.network, old.id))
            if held and labels is not None:
                self.labels.record(old.id, (old.start, old.end), label_paths(old), labels)
            elif not held:
                self.labels.release(old.id)

    def _replan_free(
        self, old: Reservation, start: int, end: int, bandwidth: int
    ) -> Replanned | str:
        network = self.planner.network
        # Keeping the same paths (in the same proportions, so the same
        # weights) spares the data plane a re-route.
        same = scale_allocations(old.allocations, bandwidth)
        if not network.shortfall(Booking(old.id, start, end, same, old.symmetric)):
            return Replanned(same, old.plan)
        request = fixed_request(old, start, end, bandwidth)
        decision, booking = self.planner.decide(request)
        if booking is None or not isinstance(decision, Reserved):
            return reason_of(decision) or "does not fit"
        return Replanned(booking.allocations, plan_facts(decision))


def scale_allocations(
    allocations: tuple[Allocation, ...], bandwidth: int
) -> tuple[Allocation, ...]:
    """The same paths sharing `bandwidth` in the old proportions, exactly."""
    shares = proportional_shares(bandwidth, [a.bandwidth for a in allocations], capped=False)
    return tuple(
        Allocation(a.path, share) for a, share in zip(allocations, shares, strict=True) if share
    )
