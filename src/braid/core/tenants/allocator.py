"""TALON's throughput allocation (Algorithm 1) on braid's time-aware network.

Algorithm 1 as braid reads it, for a request of R bit/s over [start, end):

1. C_R = what the main path can still carry throughout the window.
2. If C_R >= R, book R on the main path and stop. (The paper tests C_R > R,
   so a path with exactly R free would fall through both branches; braid
   takes it.)
3. Otherwise - including C_R = 0, which the paper's pseudo-code (line 11,
   "0 < C_R < R") leaves out although its prose handles it - preempt
   *victims*: sub-paths of other requests that load a link direction of the
   main path during an overlapping window. Main paths are never victims:
   "the main path is prioritized over the sub-path".
4. Book min(R, C_R) on the main path, C_R now counting what the victims
   freed; put the rest on sub-paths, one at a time, each taking
   min(missing, bottleneck), until R is met or no path with room remains.
5. Reallocate each victim's lost bandwidth for that victim: first on its own
   main path if that has room, then on new sub-paths, never preempting.

Choices the paper leaves open:

- The paper's tenants have one flow each, so its "sub-paths of other
  tenants" are read as sub-paths of *other requests*, whoever owns them: the
  main-over-sub priority is per flow, and a tenant's second request should
  not fare worse than another tenant's would.
- Fig. 8's narrative (T1 gets a sub-path on path 1 once T2 arrives) would
  shrink T1's main path; braid keeps main paths whole, so T1 stays on path 0
  and T2 gets what path 0 has left plus a sub-path.
- A booking has one window, so a victim's preempted sub-path is moved for the
  victim's whole window, not only where it overlaps the new request.

A request that cannot get all of R is booked with what there is (TALON's
"nearly met") and the outcome reports the shortfall and why; one that gets
nothing is not booked at all and leaves no trace. Releasing a request does
not hand its capacity back to requests that are short; ask again for that.

Every change is planned on a `Draft` and applied at once, so the network is
never left half-changed. Bookings the allocator did not make (other
reservations on the same network) are never touched: like main paths, they
cannot be preempted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from braid.core.errors import InputError
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.paths import Path
from braid.core.model.units import FOREVER, format_bandwidth
from braid.core.tenants.draft import Draft
from braid.core.tenants.model import TenantOutcome, TenantRequest, TenantState
from braid.core.tenants.routes import main_path, path_directions, path_room, sub_path

Victim = tuple[str, int, int]  # request id, index among its subs, bandwidth


class TenantAllocator:
    """Per-tenant throughput guarantees with main-path priority (TALON)."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self._states: dict[str, TenantState] = {}

    @property
    def states(self) -> Mapping[str, TenantState]:
        """Every request that holds bandwidth: its main path share and sub-paths."""
        return MappingProxyType(self._states)

    def state(self, request_id: str) -> TenantState:
        return self._require(request_id)

    def allocate(self, request: TenantRequest) -> TenantOutcome:
        """Book as much of the request as the network allows; see the module docs."""
        self._check(request)
        topology = self.network.topology
        window = self.network.window(request.start, request.end, symmetric=request.symmetric)
        path = main_path(topology, request.src, request.dst, request.main_path, window.usable)
        draft = Draft(self.network)
        victims = self._preempt(draft, request, path) if path is not None else {}
        state = self._fill(draft, TenantState(request, path, None, ()))
        moved = [self._fill(draft, victims[rid]) for rid in victims]
        # A victim placed back exactly as it was has not moved after all.
        moved = [v for v in moved if v.booking() != self.network.bookings.get(v.request.id)]
        if state.granted > 0:
            draft.apply()
            self._states[request.id] = state
            for victim in moved:
                self._keep(victim)
        else:
            # Victims are only taken to make room on the main path; when that
            # room is still zero none was taken, and nothing changes.
            moved = []
        return TenantOutcome(
            request.id,
            state.granted,
            state.main,
            state.subs,
            state.booking(),
            tuple(v.booking_or_empty() for v in moved),
            state.shortfall,
            _reason(state) if state.shortfall else None,
            state.main_path is not None,
        )

    def release(self, request_id: str) -> tuple[Booking, ...]:
        """Free the request; returns the booking(s) released from the network.

        The freed capacity is not handed to requests that are short of their
        throughput: TALON reallocates only on preemption, and growing other
        bookings behind their owners' backs would surprise them.
        """
        self._require(request_id)
        del self._states[request_id]
        if request_id in self.network.bookings:
            return (self.network.release(request_id),)
        return ()

    # -- steps ----------------------------------------------------------------

    def _preempt(self, draft: Draft, request: TenantRequest, path: Path) -> dict[str, TenantState]:
        """Take the fewest victims that give the main path R (or all it can get).

        Only sub-paths crossing the main path in an overlapping window are
        candidates. They are taken largest first, so that few flows are
        disturbed, until the main path has R or as much as it could have with
        every candidate gone; then each is spared again, smallest first, if
        the main path keeps that room without it. In a time-varying network
        freeing a sub-path may not help at all (the peak is elsewhere in the
        window); the second pass spares those too.
        """
        room = self._room(request, path, [])
        if room >= request.throughput:
            return {}
        candidates = sorted(self._candidates(request, path), key=lambda v: (-v[2], v[0], v[1]))
        target = min(request.throughput, self._room(request, path, candidates))
        if target <= room:
            return {}  # no victim would help: take none
        chosen = self._take(request, path, candidates, target)
        for victim in sorted(chosen, key=lambda v: (v[2], v[0], v[1])):
            rest = [v for v in chosen if v != victim]
            if self._room(request, path, rest) >= target:
                chosen = rest
        reduced = _reduced(self._states, chosen)
        for state in reduced.values():
            draft.put(state.request.id, state.booking())
        return reduced

    def _take(
        self, request: TenantRequest, path: Path, candidates: list[Victim], target: int
    ) -> list[Victim]:
        """The first candidates that, removed together, leave `target` on the main path."""
        trial = Draft(self.network)
        chosen: list[Victim] = []
        for victim in candidates:
            chosen.append(victim)
            rid = victim[0]
            state = _reduced(self._states, [v for v in chosen if v[0] == rid])[rid]
            trial.put(rid, state.booking())
            usable = trial.usable(request.start, request.end, request.symmetric)
            if path_room(self.network.topology, path, usable) >= target:
                break
        return chosen

    def _candidates(self, request: TenantRequest, path: Path) -> Iterable[Victim]:
        topology = self.network.topology
        needed = path_directions(topology, path, request.symmetric)
        for rid, state in self._states.items():
            other = state.request
            if not (other.start < request.end and request.start < other.end):
                continue
            for i, sub in enumerate(state.subs):
                if needed & path_directions(topology, sub.path, other.symmetric):
                    yield rid, i, sub.bandwidth

    def _room(self, request: TenantRequest, path: Path, victims: Iterable[Victim]) -> int:
        """C_R of the main path with these victims removed."""
        trial = Draft(self.network)
        for state in _reduced(self._states, victims).values():
            trial.put(state.request.id, state.booking())
        usable = trial.usable(request.start, request.end, request.symmetric)
        return path_room(self.network.topology, path, usable)

    def _fill(self, draft: Draft, state: TenantState) -> TenantState:
        """Grow `state` towards its requirement: main path first, then sub-paths."""
        r = state.request
        topology = self.network.topology
        if state.main_path is not None and state.shortfall > 0:
            usable = draft.usable(r.start, r.end, r.symmetric)
            room = min(state.shortfall, path_room(topology, state.main_path, usable))
            if room > 0:
                held = state.main.bandwidth if state.main is not None else 0
                state = state.with_main(held + room)
                draft.put(r.id, state.booking())
        # Each sub-path either meets the requirement or fills its bottleneck
        # hop, so this runs at most once per link plus one.
        while state.shortfall > 0:
            found = sub_path(topology, r.src, r.dst, draft.usable(r.start, r.end, r.symmetric))
            if found is None:
                break
            path, width = found
            state = state.with_sub(Allocation(path, min(state.shortfall, width)))
            draft.put(r.id, state.booking())
        return state

    def _keep(self, state: TenantState) -> None:
        # A victim left with nothing is no longer booked, so it is forgotten
        # too: the allocator tracks exactly the requests the network holds.
        if state.granted > 0:
            self._states[state.request.id] = state
        else:
            self._states.pop(state.request.id, None)

    def _check(self, request: TenantRequest) -> None:
        topology = self.network.topology
        if not isinstance(request.id, str) or not request.id:
            raise InputError("id", "must be a non-empty string")
        if request.id in self._states or request.id in self.network.bookings:
            raise InputError("id", f"{request.id!r} is booked already; choose a new id")
        topology.require_node(request.src, "src")
        topology.require_node(request.dst, "dst")
        if request.src == request.dst:
            raise InputError("dst", f"must differ from src ({request.src})")
        if isinstance(request.throughput, bool) or not isinstance(request.throughput, int):
            raise InputError("throughput", "must be an integer number of bit/s")
        if request.throughput <= 0:
            raise InputError("throughput", f"must be positive, got {request.throughput}")
        if request.start >= request.end:
            raise InputError("end", f"must come after start ({request.start})")
        if request.end > FOREVER:
            raise InputError("end", "lies beyond FOREVER; leave the tenant open-ended instead")

    def _require(self, request_id: str) -> TenantState:
        state = self._states.get(request_id)
        if state is None:
            raise InputError("request_id", f"no tenant request {request_id!r} holds bandwidth")
        return state


def _reduced(
    states: Mapping[str, TenantState], victims: Iterable[Victim]
) -> dict[str, TenantState]:
    """Each victim request without its preempted sub-paths, in the order taken."""
    lost: dict[str, set[int]] = {}
    for rid, index, _ in victims:
        lost.setdefault(rid, set()).add(index)
    return {rid: states[rid].without_subs(frozenset(ix)) for rid, ix in lost.items()}


def _reason(state: TenantState) -> str:
    return shortfall_reason(state.request, state.granted, joined=state.main_path is not None)


def shortfall_reason(
    r: TenantRequest, granted: int, *, joined: bool, when: Callable[[int], str] = str
) -> str:
    """Why `r` got only `granted`; `joined` when a main path joins its ends.

    `when` writes the window's instants (epoch seconds by default).
    """
    amount = format_bandwidth(granted) if granted else "nothing"
    got = f"tenant {r.tenant} gets {amount}"
    asked = format_bandwidth(r.throughput)
    window = f"[{when(r.start)}, {'open-ended' if r.end >= FOREVER else when(r.end)})"
    if not joined:
        return f"{got} of {asked}: no path joins {r.src} and {r.dst}"
    return (
        f"{got} of {asked}: no further path has free capacity between "
        f"{r.src} and {r.dst} in {window}"
    )
