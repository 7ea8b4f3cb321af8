"""Link state in the service: a link goes down or comes back, reservations follow.

A link's state lives in the topology (a new version each change), so every
replica plans around a down link, and the store refuses any write planned
on the version before. The new version and every reservation it moves are
written in one transaction: after a crash, either the link is down and its
reservations have moved, or neither happened; the provisioning loop then
puts the switches right from what the store says.

On a link going down, each booked reservation whose traffic crosses it:

- protected: its traffic moves to its standby (both paths stay booked, so
  nothing else changes and nothing can be overbooked);
- unprotected: is re-planned around the down links if capacity allows,
  else stays booked and is marked degraded (with the cause) until its path
  is whole again;
- a volume: what its profile moved before now stays, and the rest is
  re-planned around the down links to its deadline; if the rest no longer
  fits by then, it stays booked and is marked degraded, the cause saying
  how much can still move by the deadline.

When a link comes back, protected reservations return to their primary when
`failback` says so, and degraded ones are marked whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from braid.app.errors import ForbiddenError
from braid.app.ports import Change, Step, TopologyStep, WriteStep
from braid.app.records import Reservation, TopologyVersion, User
from braid.app.request_context import current_request
from braid.app.reservations.books import Books, load_validator
from braid.app.reservations.mirror import as_bookings, commit_all, held_bookings
from braid.app.reservations.plan_facts import (
    fixed_request,
    plan_facts,
    protection_facts,
    protection_of,
)
from braid.app.reservations.volume_changes import (
    changed_volume,
    relabel_volume,
    replan_steps,
    volume_ask_of,
)
from braid.app.reservations.volumes import is_volume, profile_of
from braid.core.errors import InputError
from braid.core.failover.protection import ProtectedPaths, down_links, with_link_state
from braid.core.model.booking import Allocation
from braid.core.model.loads import loads_of
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.planning.decisions import Reserved, reason_of
from braid.core.planning.planner import Planner
from braid.core.volume import VolumeRefusal

__all__ = ["LINK_STATE_ROLES", "LinkStateDone", "Moved", "set_link_state"]

# Who may say a link is down: operators, and the monitors watching the links.
LINK_STATE_ROLES: Final = ("operator", "monitor")


@dataclass(frozen=True, slots=True)
class Moved:
    """What a link-state change did to one reservation."""

    id: str
    action: str  # failover, failback, rerouted, degraded, restored
    why: str


@dataclass(frozen=True, slots=True)
class LinkStateDone:
    link: str
    state: str
    changed: bool  # False: the link was in that state already; nothing was written
    topology_version: int
    moves: tuple[Moved, ...]


def set_link_state(
    books: Books, user: User, link: str, body: Mapping[str, Any], *, failback: bool
) -> LinkStateDone:
    """Record `link` as up or down (`body["state"]`) and move the reservations it affects.

    `failback`: a protected reservation moved to its standby by a link going
    down goes back to its primary when the link comes up.
    """
    if user.role not in LINK_STATE_ROLES:
        raise ForbiddenError("only an operator or a monitor may set a link's state")
    if not isinstance(body, Mapping):
        raise InputError("", "the body must be a JSON object")
    books.topology.require_link(link, "link")
    state = body.get("state")

    def attempt(now: int, refused: bool) -> LinkStateDone:
        del refused  # the store is read afresh for every attempt
        stored = books.store.topology()
        assert stored is not None, "a started service has a topology"
        data = with_link_state(stored.data, link, state)
        if data == dict(stored.data):
            return LinkStateDone(link, str(state), False, stored.version, ())
        topology = topology_from_dict(data)
        steps, moves = _placements(books, failback, topology, books.booked(now), now, link)
        why = {"link": link, "state": state, **_request()}
        steps.insert(0, TopologyStep(data, expected=stored.version, detail=why))
        try:
            # A conflict: the topology or a booking moved meanwhile; work it out again.
            done = books.apply(steps, now, user.name)
        finally:
            books.mirror.rebuild(now)
        version = done[0]
        assert isinstance(version, TopologyVersion)
        # Bookings committed between the read above and this commit were
        # planned on the old topology: place them too. None can come later
        # (the store refuses writes planned on the old version).
        moves += settle_links(books, user.name, link, failback=failback)
        books.changed()
        return LinkStateDone(link, str(state), True, version.version, tuple(moves))

    return books.retry(attempt, "the topology or the bookings kept changing; try again")


def settle_links(books: Books, actor: str, link: str = "", *, failback: bool) -> list[Moved]:
    """Put every booked reservation where the current link states want it.

    Run after each link-state change, and when `braid serve` starts: a
    process killed between a link-state change and this pass leaves it to
    the next start. Returns what it moved.
    """

    def attempt(now: int, refused: bool) -> list[Moved]:
        del refused  # the store is read afresh for every attempt
        topology = books.topology
        cause = link or _first_down(topology)
        steps, moves = _placements(books, failback, topology, books.booked(now), now, cause)
        if not steps:
            return []
        try:
            books.apply(steps, now, actor)
        finally:
            books.mirror.rebuild(now)
        return moves

    return books.retry(attempt, "the bookings kept changing; try again")


def _first_down(topology: Topology) -> str:
    return min(down_links(topology), default="")


def _request() -> dict[str, str]:
    found = current_request()
    return {} if found is None else {"request_id": found}


def _placements(
    books: Books,
    failback: bool,
    topology: Topology,
    booked: list[Reservation],
    now: int,
    link: str,
) -> tuple[list[Step], list[Moved]]:
    """Store steps that put each booked reservation where the new link states want it."""
    down = down_links(topology)
    planner = _planner(topology, booked)
    steps: list[Step] = []
    moves: list[Moved] = []
    for r in booked:
        found = _placed(books, failback, planner, r, down, now, link)
        if found is None:
            continue
        moved, move = found
        note = {"link": link, "why": move.why}
        loads = tuple(load for b in as_bookings(moved) for load in loads_of(b, topology))
        change = Change(moved, loads, None, None, note)
        validate = load_validator(topology, change.loads)
        steps.append(WriteStep(change, validate, move.action, r.version))
        moves.append(move)
    return steps, moves


def _planner(topology: Topology, booked: list[Reservation]) -> Planner:
    """A planner on the new topology holding every booking, to re-plan around down links."""
    planner = Planner(topology)
    for r in booked:
        for booking in as_bookings(r):
            planner.network.commit(booking)
    return planner


def _placed(
    books: Books,
    failback: bool,
    planner: Planner,
    r: Reservation,
    down: frozenset[str],
    now: int,
    link: str,
) -> tuple[Reservation, Moved] | None:
    """`r` as it should be stored now, and what happened to it; None: it stays as it is."""
    if is_volume(r):
        broken = _broken_ahead(r, down, now)
        if not broken:
            return _restored(r, now, link)
        return _volume_rerouted(books, planner, r, broken, now, link)
    paths = protection_of(r.plan)
    if paths is not None:
        return _protected(failback, r, paths, down, now, link)
    broken = tuple(k for a in r.allocations for k in a.path.links if k in down)
    if not broken:
        return _restored(r, now, link)
    return _rerouted(books, planner, r, broken, now, link)


def _restored(r: Reservation, now: int, link: str) -> tuple[Reservation, Moved] | None:
    """`r` whole again (its paths up), if it was marked degraded; None: it was whole."""
    if "degraded" not in r.plan:
        return None
    plan = {k: v for k, v in r.plan.items() if k != "degraded"}
    return replace(r, plan=plan, updated_at=now), Moved(r.id, "restored", f"{link} is up")


def _marked_degraded(
    r: Reservation, broken: tuple[str, ...], why: str, now: int
) -> tuple[Reservation, Moved] | None:
    """`r` kept as booked and marked degraded with `why`; None: it is marked already."""
    if "degraded" in r.plan:
        return None
    plan = {**r.plan, "degraded": _degraded(broken, why, now)}
    return replace(r, plan=plan, updated_at=now), Moved(r.id, "degraded", why)


def _protected(
    failback: bool,
    r: Reservation,
    paths: ProtectedPaths,
    down: frozenset[str],
    now: int,
    link: str,
) -> tuple[Reservation, Moved] | None:
    chosen = paths.choose(down, revert=failback)
    broken = chosen.degraded(down)
    if chosen == paths and bool(broken) == ("degraded" in r.plan):
        return None
    shared = tuple(r.plan["protection"].get("shared_links", ()))
    plan = {k: v for k, v in r.plan.items() if k != "degraded"}
    plan["protection"] = protection_facts(chosen, shared)
    if broken:
        plan["degraded"] = _degraded(broken, "both the primary and the standby are down", now)
    moved = replace(
        r, allocations=(Allocation(chosen.active, r.bandwidth),), plan=plan, updated_at=now
    )
    if chosen.on_standby != paths.on_standby:
        action = "failover" if chosen.on_standby else "failback"
        side = "standby" if chosen.on_standby else "primary"
        return moved, Moved(r.id, action, f"link {link} {_state(link, down)}: onto the {side}")
    action = "degraded" if broken else "restored"
    return moved, Moved(r.id, action, f"link {link} {_state(link, down)}")


def _rerouted(
    books: Books,
    planner: Planner,
    r: Reservation,
    broken: tuple[str, ...],
    now: int,
    link: str,
) -> tuple[Reservation, Moved] | None:
    """`r` re-planned around the down links, or kept and marked degraded."""
    network = planner.network
    held = network.release(r.id)
    start = max(r.start, now)
    request = fixed_request(r, start)
    decision, booking = planner.decide(request)
    labels: dict[str, list[int]] | str = "no other path"
    if booking is not None and isinstance(decision, Reserved):
        labels = books.mirror.relabel(r, start, r.end, booking.allocations)
    if booking is None or not isinstance(decision, Reserved) or isinstance(labels, str):
        network.commit(held)
        why = reason_of(decision) or (labels if isinstance(labels, str) else "no other path")
        return _marked_degraded(r, broken, why, now)
    network.commit(booking)
    plan = {k: v for k, v in r.plan.items() if k != "degraded"}
    plan.update({**plan_facts(decision), **labels})
    moved = replace(r, start=start, allocations=booking.allocations, plan=plan, updated_at=now)
    return moved, Moved(r.id, "rerouted", f"link {link} down: re-planned around it")


def _broken_ahead(r: Reservation, down: frozenset[str], now: int) -> tuple[str, ...]:
    """The down links a volume's steps still to come (or in force) would cross."""
    profile = profile_of(r)
    assert profile is not None, "a volume has a profile"
    ahead = (step for step in profile.steps if step.end > now)
    return tuple(sorted({k for s in ahead for a in s.allocations for k in a.path.links} & down))


def _volume_rerouted(
    books: Books,
    planner: Planner,
    r: Reservation,
    broken: tuple[str, ...],
    now: int,
    link: str,
) -> tuple[Reservation, Moved] | None:
    """A volume's rest re-planned around the down links (what moved stays), or it kept
    and marked degraded with how much can still move by the deadline."""
    network = planner.network
    found = replan_steps(network, r, volume_ask_of(r), now)
    if isinstance(found, VolumeRefusal):
        return _marked_degraded(r, broken, found.reason, now)
    labels = relabel_volume(books.mirror, r, found.profile)
    if isinstance(labels, str):
        return _marked_degraded(r, broken, labels, now)
    for step in held_bookings(network, r.id):
        network.release(step.id)
    commit_all(network, found.profile.bookings(r.id, symmetric=r.symmetric))
    moved = changed_volume(r, found.profile, labels, now)
    return moved, Moved(r.id, "rerouted", f"link {link} down: the rest re-planned around it")


def _degraded(links: tuple[str, ...], why: str, now: int) -> dict[str, Any]:
    return {"links": list(links), "why": why, "since": now}


def _state(link: str, down: frozenset[str]) -> str:
    return "down" if link in down else "up"
