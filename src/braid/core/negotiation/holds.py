"""One domain's holds and bookings for negotiated transactions (pure; time is an argument).

A hold is capacity set aside by ReservationPrep: the domain's yes vote.
Commit turns it into a booking, Abort frees it, Release frees a booking (a
cancel). A yes vote is a promise to the coordinator, so a hold never frees
itself: once `expires_at` has passed the agent asks the coordinator for
the decision and applies it. Every segment of a transaction
is booked in the domain's `Network` at Prep (so later offers and holds see
it), under the booking id ``<transaction>#<segment>``. Commit, Abort and
Release are idempotent: a repeat reports the state and changes nothing.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from braid.core.errors import InputError
from braid.core.graph.search import shortest_feasible_path
from braid.core.model.booking import Allocation, Booking
from braid.core.model.loads import Direction, direction_loads
from braid.core.model.network import Network, WindowView
from braid.core.model.paths import Path
from braid.core.model.timeline import OverbookingError
from braid.core.model.topology import Topology
from braid.core.model.vlans import VlanSpans
from braid.core.multipath import SplitPlan, max_flow_value
from braid.core.multipath.chains import Skeleton
from braid.core.multipath.mdi import DEFAULT_POLICY
from braid.core.multipath.plan import Gate
from braid.core.multipath.split import split_in_view
from braid.core.negotiation.domains import VlanRange
from braid.core.negotiation.sharing import excess_bookings


class HoldState(Enum):
    HELD = "held"
    COMMITTED = "committed"
    ABORTED = "aborted"
    # Freed by the clock alone, as agents did before a yes vote waited for the
    # decision; kept so that their stores still load.
    EXPIRED = "expired"
    RELEASED = "released"


# States whose capacity is free; a tombstone (no segments) in one of them refuses a late Prep.
# How a Prep refused for want of a VLAN begins (the orchestrator retries on fewer paths).
NO_FREE_VLAN = "no free VLAN on link"
FREED = frozenset({HoldState.ABORTED, HoldState.EXPIRED, HoldState.RELEASED})


@dataclass(frozen=True, slots=True)
class SegmentAsk:
    entry: str
    exit: str
    bandwidth: int
    path_index: int


@dataclass(frozen=True, slots=True)
class VlanPick:
    link: str
    vlan: int
    path_index: int


@dataclass(frozen=True, slots=True)
class Hold:
    """A transaction at this domain; `allocations` per segment (empty for a tombstone)."""

    transaction: str
    token: str
    state: HoldState
    start: int
    end: int
    expires_at: int
    symmetric: bool
    segments: tuple[SegmentAsk, ...]
    allocations: tuple[tuple[Allocation, ...], ...]
    vlans: tuple[VlanPick, ...] = ()
    # Where the decision may be asked (host:port), empty when nobody takes questions.
    coordinator: str = ""
    # A modify's new version: the committed transaction it replaces here, and while
    # it stands beside it (`shares`: held, then committed until the old version's
    # release), what it books beyond it (`shared`, perhaps nothing); `allocations`
    # are then placed but not booked, and are booked once the old version goes.
    replaces: str = ""
    shares: bool = False
    shared: tuple[Booking, ...] = ()
    # A volume's step replacing several old steps: the others it shares beside
    # `replaces` (every old step overlapping it counts as free for it).
    also_replaces: tuple[str, ...] = ()

    @property
    def replaced(self) -> tuple[str, ...]:
        """Every old version this one replaces (none unless it is a modify's)."""
        return (self.replaces, *self.also_replaces) if self.replaces else ()

    @property
    def sharing(self) -> bool:
        return self.shares and self.state in (HoldState.HELD, HoldState.COMMITTED)

    @property
    def tombstone(self) -> bool:
        """Left by an Abort or Release that came before any Prep."""
        return not self.segments and self.state in FREED


class PrepRefused(Exception):  # noqa: N818 - a vote, not a failure of the agent
    """The domain votes no; the message says why."""


class UnknownTransactionError(InputError):
    def __init__(self, transaction: str) -> None:
        super().__init__("transaction_id", f"unknown transaction {transaction!r}")


class StateConflictError(InputError):
    pass


class BadTokenError(InputError):
    def __init__(self, transaction: str) -> None:
        super().__init__("token", f"does not belong to transaction {transaction!r}")


class HoldBook:
    """Holds and bookings of one domain over its own `Network`."""

    def __init__(self, network: Network, vlan_links: Mapping[str, VlanRange]) -> None:
        self.network = network
        self.vlan_links = dict(vlan_links)
        self.holds: dict[str, Hold] = {}
        # link -> VLAN -> the windows (with transaction) of live holds using it,
        # so a Prep finds a free VLAN without looking at every hold.
        self._vlan_use: dict[str, dict[int, list[tuple[int, int, str]]]] = {}
        # A committed transaction -> the held modifies sharing its bookings.
        self._sharers: dict[str, set[str]] = {}

    # -- queries -----------------------------------------------------------

    def offer(
        self,
        entry: str,
        exit: str,
        start: int,
        end: int,
        symmetric: bool,
        replaces: tuple[str, str] | None = None,
        also_replaces: Sequence[tuple[str, str]] = (),
    ) -> int:
        """The most this domain can carry from `entry` to `exit` throughout [start, end)
        (for a modify, counting the committed versions it `replaces` as free)."""
        if entry == exit:
            return _largest_capacity(self.network)
        olds = self._replaceable((replaces, *also_replaces), symmetric, (start, end))
        self._lift(olds)
        try:
            view = self.network.window(start, end, symmetric=symmetric)
            return max_flow_value(
                self.network.topology, entry, exit, view.usable, symmetric=symmetric
            )
        finally:
            self._put_back(olds)

    def offer_steps(
        self,
        entry: str,
        exit: str,
        start: int,
        end: int,
        symmetric: bool,
        replaces: tuple[str, str] | None = None,
        also_replaces: Sequence[tuple[str, str]] = (),
    ) -> list[tuple[int, int, int]]:
        """`offer` over time: (start, end, bit/s) steps covering [start, end).

        Free capacity only changes where some link's booked level does, so
        the window is cut at the network's breakpoints and each elementary
        interval gets `offer`'s answer for it alone; adjacent equal steps merge.
        """
        olds = self._replaceable((replaces, *also_replaces), symmetric, (start, end))
        self._lift(olds)
        try:
            cuts = [start, *(t for t in self.network.breakpoints(start, end) if t > start), end]
        finally:
            self._put_back(olds)
        steps: list[tuple[int, int, int]] = []
        for left, right in itertools.pairwise(cuts):
            value = self.offer(entry, exit, left, right, symmetric, replaces, also_replaces)
            if steps and steps[-1][2] == value:
                steps[-1] = (steps[-1][0], right, value)
            else:
                steps.append((left, right, value))
        return steps

    # -- Prep, Commit, Abort, expiry -----------------------------------------

    def prepare(
        self,
        transaction: str,
        token: str,
        segments: Sequence[SegmentAsk],
        start: int,
        end: int,
        expires_at: int,
        symmetric: bool,
        coordinator: str = "",
        vlan_ranges: Mapping[str, VlanSpans] | None = None,
        replaces: tuple[str, str] | None = None,
        also_replaces: Sequence[tuple[str, str]] = (),
    ) -> Hold:
        """Hold every segment or none; raises PrepRefused with the reason for a no vote.

        `vlan_ranges`: per owned link, the VLANs this Prep may be given (a peer's
        share); a link it does not name offers its whole range. `replaces`: a
        modify's (transaction, token) of the committed version this one replaces;
        the new version is placed as if it were gone and books only its excess
        over it (`sharing`). An unknown or no longer committed one is ignored.
        `also_replaces`: more old versions (a volume's steps), all counted as free.
        """
        known = self.holds.get(transaction)
        if known is not None:
            if known.token != token:
                raise BadTokenError(transaction)
            if known.state is HoldState.HELD and known.segments == tuple(segments):
                return known  # a repeated Prep: the same vote again
            raise StateConflictError(
                "transaction_id", f"transaction {transaction!r} is {known.state.value}"
            )
        olds = self._replaceable((replaces, *also_replaces), symmetric, (start, end))
        booked: list[tuple[Allocation, ...]] = []
        picks: list[VlanPick] = []
        ranges = {link: [(r.low, r.high)] for link, r in self.vlan_links.items()}
        ranges.update({link: list(spans) for link, spans in (vlan_ranges or {}).items()})
        self._lift(olds)
        try:
            for index, segment in enumerate(segments):
                allocations, chosen = self._hold_segment(
                    transaction, index, segment, (start, end), symmetric, (ranges, picks)
                )
                booked.append(allocations)
                picks += chosen
            hold = Hold(
                transaction,
                token,
                HoldState.HELD,
                start,
                end,
                expires_at,
                symmetric,
                tuple(segments),
                tuple(booked),
                coordinator=coordinator,
                vlans=tuple(picks),
            )
        except Exception:  # a no vote (or a fault) books nothing, and the old version stands
            self._release_own(transaction, booked)
            self._put_back(olds)
            raise
        if olds:  # booked while the old ones were lifted: swap for the excess
            self._release_own(transaction, booked)
            self._put_back(olds)
            hold = self._share(hold, olds)
        self.holds[transaction] = hold
        self._use_vlans(hold)
        return hold

    def _replaceable(
        self,
        named: Sequence[tuple[str, str] | None],
        symmetric: bool,
        window: tuple[int, int],
    ) -> list[Hold]:
        """The committed holds a modify may count as free over `window`, of those named."""
        out: list[Hold] = []
        for replaces in dict.fromkeys(named):
            if replaces is None or not replaces[0]:
                continue
            old = self.holds.get(replaces[0])
            if old is None or old.state is not HoldState.COMMITTED or old.symmetric != symmetric:
                continue
            if old.token != replaces[1]:
                raise BadTokenError(replaces[0])
            if old.end <= window[0] or window[1] <= old.start:
                continue  # another time: nothing of it to count as free
            # One sharer at any instant, of a version that books its own placement: two
            # modifies over the same old version at once would each count it free
            # (together, twice), and a version still sharing has only its excess booked
            # to lift. Sharers apart in time (a volume's new steps) never count it twice.
            if old.sharing or self._shared_during(old.transaction, window):
                continue
            out.append(old)
        return out

    def _shared_during(self, transaction: str, window: tuple[int, int]) -> bool:
        start, end = window
        sharers = (self.holds[t] for t in self._sharers.get(transaction, ()))
        return any(h.start < end and start < h.end for h in sharers)

    def _lift(self, olds: Sequence[Hold]) -> None:
        """Take the old versions' bookings out for a moment (put back before returning)."""
        for old in olds:
            self._release_own(old.transaction, old.allocations)

    def _put_back(self, olds: Sequence[Hold]) -> None:
        for old in olds:
            self._book_own(old)

    def _release_own(self, transaction: str, allocations: Sequence[tuple[Allocation, ...]]) -> None:
        for index, placed in enumerate(allocations):
            if placed:
                self.network.release(f"{transaction}#{index}")

    def _book_own(self, hold: Hold) -> None:
        for index, allocations in enumerate(hold.allocations):
            if allocations:
                self.network.commit(
                    Booking(
                        f"{hold.transaction}#{index}",
                        hold.start,
                        hold.end,
                        allocations,
                        hold.symmetric,
                    )
                )

    def _share(self, hold: Hold, olds: Sequence[Hold]) -> Hold:
        """`hold` booking only its excess over `olds` (committed, booked in full)."""
        topology = self.network.topology
        excess = excess_bookings(
            hold.transaction,
            (hold.start, hold.end, _loads(hold, topology)),
            [(old.start, old.end, _loads(old, topology)) for old in olds],
            topology,
        )
        names = tuple(old.transaction for old in olds)
        hold = replace(hold, replaces=names[0], also_replaces=names[1:], shares=True, shared=excess)
        self._book_shared(hold)
        return hold

    def _book_shared(self, hold: Hold) -> None:
        done: list[str] = []
        try:
            for booking in hold.shared:
                self.network.commit(booking)
                done.append(booking.id)
        except OverbookingError as exc:  # pragma: no cover - old plus excess fitted before
            for booking_id in done:
                self.network.release(booking_id)
            raise PrepRefused(str(exc)) from exc
        for old in hold.replaced:
            self._sharers.setdefault(old, set()).add(hold.transaction)

    def _drop_shared(self, hold: Hold) -> Hold:
        for booking in hold.shared:
            self.network.release(booking.id)
        for old in hold.replaced:
            sharers = self._sharers.get(old, set())
            sharers.discard(hold.transaction)
            if not sharers:
                self._sharers.pop(old, None)
        return replace(hold, shares=False, shared=())

    def _unshare(self, hold: Hold) -> Hold:
        """A sharing hold once an old version it shares is gone: its excess over the old
        versions still committed, or its own placement when none is (it fits: the old
        versions plus the excess covered it everywhere)."""
        hold = self._drop_shared(hold)
        left = [self.holds[t] for t in hold.replaced if self._committed(t)]
        if left:
            return self._share(hold, left)
        self._book_own(hold)
        return hold

    def _committed(self, transaction: str) -> bool:
        known = self.holds.get(transaction)
        return known is not None and known.state is HoldState.COMMITTED

    def _hold_segment(
        self,
        transaction: str,
        index: int,
        segment: SegmentAsk,
        window: tuple[int, int],
        symmetric: bool,
        vlans: tuple[Mapping[str, Sequence[tuple[int, int]]], Sequence[VlanPick]],
    ) -> tuple[tuple[Allocation, ...], list[VlanPick]]:
        """Book one segment and pick a VLAN on each owned link it crosses.

        A placement crossing a link with no VLAN left (in the ranges this Prep may
        use) is placed again without that link — over a parallel border link,
        say — until one fits or none does.
        """
        if segment.entry == segment.exit:
            return (), []
        start, end = window
        ranges, taken = vlans
        view = self.network.window(start, end, symmetric=symmetric)
        short: dict[str, str] = {}
        while True:
            found = _place(view, segment)
            if isinstance(found, str):
                if short:  # it fitted before the links out of VLANs were left out
                    out = ", ".join(f"{link} in {spans}" for link, spans in sorted(short.items()))
                    raise PrepRefused(f"{NO_FREE_VLAN} {out}")
                raise PrepRefused(found)
            crossed = sorted({link for a in found for link in a.path.links if link in ranges})
            picks = [
                (link, self._free_vlan(link, ranges[link], taken, start, end)) for link in crossed
            ]
            empty = [link for link, vlan in picks if vlan is None]
            if not empty:
                break
            short.update((link, _spans_text(ranges[link])) for link in empty)
            view = view.without(empty)
        booking = Booking(f"{transaction}#{index}", start, end, found, symmetric)
        try:
            self.network.commit(booking)
        except OverbookingError as exc:  # pragma: no cover - the placement checked the room
            raise PrepRefused(str(exc)) from exc
        return booking.allocations, [
            VlanPick(link, vlan, segment.path_index) for link, vlan in picks if vlan is not None
        ]

    def commit(self, transaction: str, token: str) -> tuple[Hold, bool]:
        """(the hold, whether this call changed it); Commit after expiry or Abort conflicts."""
        hold = self._known(transaction, token)
        if hold.state is HoldState.COMMITTED:
            return hold, False
        if hold.state is not HoldState.HELD:
            raise StateConflictError(
                "transaction_id",
                f"cannot commit: transaction {transaction!r} is {hold.state.value}",
            )
        # A modify's new version keeps sharing the old one's bookings until the old
        # version's Release: both versions' rules stand in between (make-before-break
        # across domains), and a link never carries more than the larger of the two.
        hold = replace(hold, state=HoldState.COMMITTED)
        self.holds[transaction] = hold
        return hold, True

    def expire(self, transaction: str) -> Hold:
        """Free a prepared hold whose time is up with nobody to ask for its decision
        (no coordinator); a hold in any other state is left as it is."""
        hold = self.holds[transaction]
        if hold.state is not HoldState.HELD:
            return hold
        return self._free(hold, HoldState.EXPIRED)

    def abort(self, transaction: str, token: str, *, tombstone: bool = True) -> tuple[Hold, bool]:
        """Free a hold. An Abort for an unknown transaction leaves a tombstone so that
        a Prep overtaken by its Abort is refused when it arrives."""
        hold = self._or_tombstone(transaction, token, HoldState.ABORTED, tombstone)
        if hold is None:
            return self.holds[transaction], True
        if hold.state in FREED:
            return hold, False
        if hold.state is HoldState.COMMITTED:
            raise StateConflictError(
                "transaction_id", f"cannot abort: transaction {transaction!r} is committed"
            )
        return self._free(hold, HoldState.ABORTED), True

    def release(self, transaction: str, token: str) -> tuple[Hold, bool]:
        """Free a booking (or a hold): the reservation is cancelled. Unknown leaves a
        tombstone, so a Prep still on its way is refused."""
        hold = self._or_tombstone(transaction, token, HoldState.RELEASED, True)
        if hold is None:
            return self.holds[transaction], True
        if hold.state in FREED:
            return hold, False
        return self._free(hold, HoldState.RELEASED), True

    def _or_tombstone(
        self, transaction: str, token: str, state: HoldState, tombstone: bool
    ) -> Hold | None:
        """The known hold (token checked), or None once a tombstone was left for it."""
        hold = self.holds.get(transaction)
        if hold is None:
            if not tombstone:
                raise UnknownTransactionError(transaction)
            self.holds[transaction] = Hold(transaction, token, state, 0, 0, 0, True, (), ())
            return None
        if hold.token != token:
            raise BadTokenError(transaction)
        return hold

    def _free(self, hold: Hold, state: HoldState) -> Hold:
        sharing = hold.sharing
        if sharing:  # only its excess is booked; the old version stays
            hold = self._drop_shared(hold)
        else:
            self._release_own(hold.transaction, hold.allocations)
        self._free_vlans(hold)
        freed = replace(hold, state=state)
        self.holds[hold.transaction] = freed
        if not sharing:  # freed first: its sharers no longer count it
            for other in sorted(self._sharers.get(hold.transaction, ())):
                self.holds[other] = self._unshare(self.holds[other])
        return freed

    def _known(self, transaction: str, token: str) -> Hold:
        hold = self.holds.get(transaction)
        if hold is None or hold.tombstone:
            raise UnknownTransactionError(transaction)
        if hold.token != token:
            raise BadTokenError(transaction)
        return hold

    # -- restart -------------------------------------------------------------

    def restore(self, holds: Iterable[Hold]) -> None:
        """Put persisted holds back: HELD and COMMITTED ones occupy capacity again."""
        sharing: list[Hold] = []
        for hold in holds:
            self.holds[hold.transaction] = hold
            if hold.sharing:
                sharing.append(hold)
            elif hold.state in (HoldState.HELD, HoldState.COMMITTED):
                self._book_own(hold)
                self._use_vlans(hold)
        # Only states are written when holds change, so a modify still held whose old
        # version was released meanwhile is known by that: it books its own placement.
        for hold in sharing:
            left = [self.holds[t] for t in hold.replaced if self._committed(t)]
            if len(left) == len(hold.replaced):
                self._book_shared(hold)
            elif left:  # some of its old versions went: its excess over the rest
                hold = self._share(replace(hold, shares=False, shared=()), left)
                self.holds[hold.transaction] = hold
            else:
                hold = replace(hold, shares=False, shared=())
                self._book_own(hold)
                self.holds[hold.transaction] = hold
            self._use_vlans(hold)

    # -- VLANs on owned inter-domain links -------------------------------------

    def _free_vlan(
        self,
        link: str,
        spans: Sequence[tuple[int, int]],
        taken_now: Sequence[VlanPick],
        start: int,
        end: int,
    ) -> int | None:
        mine = {p.vlan for p in taken_now if p.link == link}
        use = self._vlan_use.get(link, {})
        for low, high in spans:
            for vlan in range(low, high + 1):
                if vlan not in mine and not _overlaps(use.get(vlan, ()), start, end):
                    return vlan
        return None

    def _use_vlans(self, hold: Hold) -> None:
        for pick in hold.vlans:
            windows = self._vlan_use.setdefault(pick.link, {}).setdefault(pick.vlan, [])
            bisect.insort(windows, (hold.start, hold.end, hold.transaction))

    def _free_vlans(self, hold: Hold) -> None:
        for pick in hold.vlans:
            windows = self._vlan_use.get(pick.link, {}).get(pick.vlan)
            if windows:
                windows[:] = [w for w in windows if w[2] != hold.transaction]


def _place(view: WindowView, segment: SegmentAsk) -> tuple[Allocation, ...] | str:
    """Where the segment fits in `view`, or why it does not.

    Most segments fit on one path: the one `split_fixed` would pick first (the
    lowest-latency path with room), found without its max-flow work; where
    the ends have only one way between them, that way, read at once.
    """
    single = _only_way(view, segment) or shortest_feasible_path(
        view.topology, segment.entry, segment.exit, view.usable, segment.bandwidth
    )
    if single is not None:
        return (Allocation(single, segment.bandwidth),)
    gate = Gate(view.topology, "flow", DEFAULT_POLICY)
    plan = split_in_view(view, segment.entry, segment.exit, segment.bandwidth, 4, gate)
    return plan.allocations if isinstance(plan, SplitPlan) else plan.reason


def _only_way(view: WindowView, segment: SegmentAsk) -> Path | None:
    """The one path between the segment's ends when there is no other, if it has room."""
    hops = Skeleton.of(view.topology, (segment.entry, segment.exit)).line
    if hops is None:
        return None
    usable, need = view.usable, segment.bandwidth
    if any(usable(hop) < need for hop in hops):
        return None  # the search says why it does not fit
    return Path.from_hops(segment.entry, hops)


def _spans_text(spans: Sequence[tuple[int, int]]) -> str:
    """`150-150`, `100-119,150-159`: as refusals have always written a link's range."""
    return ",".join(f"{low}-{high}" for low, high in spans)


def _overlaps(windows: Sequence[tuple[int, int, str]], start: int, end: int) -> bool:
    """Whether one VLAN's uses of one link (sorted by start) meet [start, end).

    They never meet one another (a VLAN is given only where it is free), so of
    those starting before `end` the last one ends last: a binary search, not a
    scan of every booking the VLAN ever had.
    """
    before_end = bisect.bisect_left(windows, (end,))
    return before_end > 0 and windows[before_end - 1][1] > start


def _loads(hold: Hold, topology: Topology) -> dict[Direction, int]:
    """What all of a hold's segments put on each link direction."""
    out: dict[Direction, int] = {}
    for allocations in hold.allocations:
        booking = Booking("", hold.start, hold.end, allocations, hold.symmetric)
        for key, load in direction_loads(booking, topology).items():
            out[key] = out.get(key, 0) + load
    return out


def _largest_capacity(network: Network) -> int:
    return max((link.capacity for link in network.topology.links.values()), default=0)
