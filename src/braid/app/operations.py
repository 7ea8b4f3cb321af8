"""Operator actions and housekeeping: topology versions, maintenance, lifecycle ticks."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from braid.app.errors import ForbiddenError, RejectedError
from braid.app.mirror import as_booking
from braid.app.ports import ConflictError
from braid.app.records import Reservation, User
from braid.app.service import ReservationService
from braid.app.timefmt import parse_instant
from braid.app.views import reservation_view
from braid.core.decisions import paths_field
from braid.core.errors import InputError
from braid.core.lifecycle import State, counts_against_capacity, state_at
from braid.core.loads import capacity_lookup, loads_of, peak_problems
from braid.core.network import Allocation, Booking
from braid.core.paths import Path
from braid.core.requests import Request
from braid.core.topology import Topology, topology_from_dict, topology_to_dict


def require_operator(user: User) -> None:
    if user.role != "operator":
        raise ForbiddenError("only an operator may do this")


def get_topology(service: ReservationService) -> dict[str, Any]:
    stored = service.repo.topology()
    return {"version": stored.version if stored else 0, **topology_to_dict(service.topology)}


def put_topology(
    service: ReservationService, user: User, data: Mapping[str, Any], *, force: bool
) -> dict[str, Any]:
    """Store a new topology version; bookings that no longer fit are reported, never dropped."""
    require_operator(user)
    topology = topology_from_dict(data)
    now = service.clock()
    booked = [r for r in service.repo.booked() if _counts(r, now)]
    misfits = no_longer_fit(topology, booked)
    if misfits and not force:
        raise RejectedError(
            f"{len(misfits)} reservation(s) would no longer fit; nothing changed. "
            "Re-route or cancel them, or send force=true to mark them failed",
            detail={"conflicts": misfits},
        )
    stored = service.repo.put_topology(data, now=now, actor=user.name)
    for misfit in misfits:
        _fail(service, misfit["id"], user, f"topology version {stored.version}: {misfit['why']}")
    service.live.rebuild(now)
    return {"version": stored.version, "failed": misfits}


def no_longer_fit(topology: Topology, booked: Iterable[Reservation]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    fitting: list[Reservation] = []
    for r in booked:
        missing = [
            link for a in r.allocations for link in a.path.links if link not in topology.links
        ]
        if missing:
            out.append({"id": r.id, "why": f"link {missing[0]} is gone"})
        else:
            fitting.append(r)
    capacity = capacity_lookup(topology)
    for r in fitting:
        # A reservation is a misfit when it touches a link that is over capacity.
        others = [load for o in fitting for load in loads_of(as_booking(o), topology)]
        over = {p.split()[1] for p in peak_problems(others, capacity)}
        used = {link for a in r.allocations for link in a.path.links}
        if over & used:
            out.append({"id": r.id, "why": f"link {sorted(over & used)[0]} lost capacity"})
    return out


def maintenance(service: ReservationService, user: User, body: Mapping[str, Any]) -> dict[str, Any]:
    """Take a link or node out of service for a window; re-route what can be re-routed."""
    require_operator(user)
    links, label = _maintenance_links(service.topology, body)
    start, end = parse_instant(body.get("start"), "start"), parse_instant(body.get("end"), "end")
    if end <= start:
        raise InputError("end", "must be after start")
    now = service.clock()
    affected = [r for r in service.repo.booked() if _uses(r, links, start, end, now)]
    rerouted, failed = _reroute(service, user, affected, links, start, end, now)
    record = _maintenance_record(service.topology, user, links, label, start, end, now, body)
    try:
        stored = service.write_record(record, user, "maintenance", now)
    except ConflictError as exc:
        raise RejectedError(f"new bookings arrived meanwhile ({exc}); try again") from exc
    return {"maintenance": reservation_view(stored, now), "rerouted": rerouted, "failed": failed}


def _maintenance_links(topology: Topology, body: Mapping[str, Any]) -> tuple[list[str], str]:
    link, node = body.get("link"), body.get("node")
    if (link is None) == (node is None):
        raise InputError("link", "name exactly one of 'link' or 'node'")
    if link is not None:
        if link not in topology.links:
            raise InputError("link", f"unknown link {link!r}")
        return [str(link)], f"link {link}"
    topology.require_node(str(node), "node")
    return sorted({hop.link for hop in topology.hops(str(node))}), f"node {node}"


def _uses(r: Reservation, links: list[str], start: int, end: int, now: int) -> bool:
    if not _counts(r, now) or r.end <= start or r.start >= end:
        return False
    return any(link in links for a in r.allocations for link in a.path.links)


def _reroute(
    service: ReservationService,
    user: User,
    affected: list[Reservation],
    links: list[str],
    start: int,
    end: int,
    now: int,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Plan every affected booking around the links, then write the moves."""
    plans = _plan_around(service, affected, links, start, end, now)
    rerouted, failed = [], []
    for r, allocations in plans:
        if isinstance(allocations, str):
            _fail(service, r.id, user, f"maintenance on {', '.join(links)}: {allocations}")
            failed.append({"id": r.id, "why": allocations})
            continue
        moved = replace(r, start=max(r.start, now), allocations=allocations, updated_at=now)
        try:
            service.write_record(moved, user, "rerouted", now, expected=r.version)
        except ConflictError as exc:
            _fail(service, r.id, user, f"could not re-route: {exc}")
            failed.append({"id": r.id, "why": str(exc)})
            continue
        rerouted.append({"id": r.id, "paths": paths_field(allocations)})
    return rerouted, failed


def _plan_around(
    service: ReservationService,
    affected: list[Reservation],
    links: list[str],
    start: int,
    end: int,
    now: int,
) -> list[tuple[Reservation, tuple[Allocation, ...] | str]]:
    """Plans in the mirror with the links blocked; the mirror is rebuilt afterwards."""
    mirror = service.live
    with mirror.lock:
        network = mirror.network
        for r in affected:
            if r.id in network.bookings:
                network.release(r.id)
        block = _blocking_booking(service.topology, links, start, end)
        network.commit(block)
        plans: list[tuple[Reservation, tuple[Allocation, ...] | str]] = []
        for r in affected:
            request = Request(
                id=r.id,
                mode="fixed",
                src=r.src,
                dst=r.dst,
                bandwidth=r.bandwidth,
                start=max(r.start, now),
                end=r.end,
                max_paths=int(r.request.get("max_paths", 1)),
                split=r.request.get("split", "flow"),
                directional=not r.symmetric,
            )
            decision, booking = mirror.planner.decide(request)
            if booking is None:
                plans.append((r, str(decision.get("reason", "no other path"))))
            else:
                network.commit(booking)
                plans.append((r, booking.allocations))
        mirror.rebuild(now)
    return plans


def _blocking_booking(topology: Topology, links: list[str], start: int, end: int) -> Booking:
    allocations = tuple(
        Allocation(
            Path((topology.links[k].a, topology.links[k].b), (k,)), topology.links[k].capacity
        )
        for k in links
    )
    return Booking("maintenance", start, end, allocations, True)


def _maintenance_record(
    topology: Topology,
    user: User,
    links: list[str],
    label: str,
    start: int,
    end: int,
    now: int,
    body: Mapping[str, Any],
) -> Reservation:
    block = _blocking_booking(topology, links, start, end)
    first = topology.links[links[0]]
    return Reservation(
        id="m-" + secrets.token_hex(6),
        token=secrets.token_urlsafe(24),  # tokens are unique in the store, even here
        owner=user.name,
        state=State.RESERVED,
        src=first.a,
        dst=first.b,
        start=start,
        end=end,
        allocations=block.allocations,
        kind="maintenance",
        request={"target": label, "reason": str(body.get("reason", ""))},
        created_at=now,
        updated_at=now,
    )


def _fail(service: ReservationService, reservation_id: str, user: User, why: str) -> None:
    service.repo.set_state(
        reservation_id, State.FAILED, now=service.clock(), actor=user.name, detail={"why": why}
    )


def _counts(r: Reservation, now: int) -> bool:
    return counts_against_capacity(r.state, r.end, now, r.hold_expires_at)


def tick(service: ReservationService) -> int:
    """Record the transitions the clock has made (held->expired, reserved->active->finished)."""
    now = service.clock()
    moved = 0
    for r in service.repo.booked():
        state = state_at(r.state, r.start, r.end, now, r.hold_expires_at)
        if state == r.state:
            continue
        try:
            service.repo.set_state(r.id, state, now=now, actor="system", detail={"why": "clock"})
            moved += 1
        except (InputError, ConflictError):
            continue  # another replica recorded it first
    service.live.catch_up(now)
    return moved


def utilisation(service: ReservationService) -> list[tuple[str, str, float]]:
    now = service.clock()
    out = []
    for (link, forward), timeline in service.live.network.timelines().items():
        out.append((link, "a-b" if forward else "b-a", timeline.level_at(now) / timeline.capacity))
    return out
