"""Operator actions and housekeeping: topology versions, maintenance, lifecycle ticks."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from braid.app.errors import ForbiddenError, RejectedError
from braid.app.ports import ConflictError, StateStep, Step, TopologyStep
from braid.app.records import Reservation, TopologyVersion, User
from braid.app.reservations.books import Books, counting_at
from braid.app.reservations.idempotency import body_digest, check_key, same_request
from braid.app.reservations.mirror import as_booking
from braid.app.reservations.plan_facts import Replanned, fixed_request, kept_facts, plan_facts
from braid.app.reservations.results import MaintenanceDone, Rerouted, Seen
from braid.core.errors import InputError
from braid.core.model.booking import Allocation, Booking
from braid.core.model.instants import parse_instant
from braid.core.model.loads import capacity_lookup, loads_of, peak_problems
from braid.core.model.paths import Path
from braid.core.model.topology import Topology, topology_from_dict, topology_to_dict
from braid.core.planning.decisions import Reserved, reason_of
from braid.core.planning.lifecycle import State, state_at


def require_operator(user: User) -> None:
    if user.role != "operator":
        raise ForbiddenError("only an operator may do this")


def get_topology(books: Books) -> dict[str, Any]:
    stored = books.store.topology()
    return {"version": stored.version if stored else 0, **topology_to_dict(books.topology)}


def put_topology(
    books: Books, user: User, data: Mapping[str, Any], *, force: bool
) -> dict[str, Any]:
    """Store a new topology version; bookings that no longer fit are reported, never dropped."""
    require_operator(user)
    topology = topology_from_dict(data)
    now = books.clock()
    booked = books.booked(now)
    misfits = no_longer_fit(topology, booked)
    if misfits and not force:
        raise RejectedError(
            f"{len(misfits)} reservation(s) would no longer fit; nothing changed. "
            "Re-route or cancel them, or send force=true to mark them failed",
            detail={"conflicts": misfits},
        )
    # The new version and the failures it causes land in one transaction.
    steps: list[Step] = [TopologyStep(data)]
    steps += [
        StateStep(m["id"], State.FAILED, {"why": f"topology change: {m['why']}"}) for m in misfits
    ]
    stored = books.apply(steps, now, user.name)[0]
    assert isinstance(stored, TopologyVersion)
    books.mirror.rebuild(now)
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
    loads = [load for o in fitting for load in loads_of(as_booking(o), topology)]
    over = {p.split()[1] for p in peak_problems(loads, capacity)}
    for r in fitting:
        # A reservation is a misfit when it touches a link that is over capacity.
        used = {link for a in r.allocations for link in a.path.links}
        if over & used:
            out.append({"id": r.id, "why": f"link {sorted(over & used)[0]} lost capacity"})
    return out


def maintenance(
    books: Books, user: User, body: Mapping[str, Any], key: str | None = None
) -> MaintenanceDone:
    """Take a link or node out of service for a window; re-route what can be re-routed.

    The re-routes, the failures and the maintenance booking itself are
    written in one transaction: all of it happens, or none. With an
    Idempotency-Key `key` the maintenance booking keeps it (and its body's
    digest): the same request sent again gets that booking back (`replayed`),
    with no re-route or failure, since the first request made them.
    """
    require_operator(user)
    check_key(key)
    digest = body_digest("maintenance", body)
    first = _keyed(books, user, key, digest)
    if first is not None:
        return first
    links, label = _maintenance_links(books.topology, body)
    now, zone = books.clock(), user.tz
    start = parse_instant(body.get("start"), "start", zone=zone, now=now)
    end = parse_instant(body.get("end"), "end", zone=zone, now=now)
    if end <= start:
        raise InputError("end", "must be after start")

    def attempt(now: int, refused: bool) -> MaintenanceDone:
        del refused  # the store is read afresh for every attempt
        affected = [r for r in books.store.booked() if _uses(r, links, start, end, now)]
        plans = _plan_around(books, affected, links, start, end, now)
        steps, rerouted, failed = _moves(books, plans, links, now)
        record = _maintenance_record(books.topology, user, links, label, start, end, now, body)
        if key is not None:
            record = replace(record, idempotency_key=key, request_digest=digest)
        steps.append(books.write_step(record, "maintenance"))
        try:
            done = books.apply(steps, now, user.name)
        except ConflictError:
            first = _keyed(books, user, key, digest)  # the same key, written meanwhile
            if first is not None:
                return first
            raise  # bookings moved meanwhile: plan again
        books.mirror.catch_up(now)
        stored = done[-1]
        assert isinstance(stored, Reservation)
        return MaintenanceDone(Seen(stored, now), tuple(rerouted), tuple(failed))

    return books.retry(attempt, "bookings on these links kept changing; try again")


def _keyed(books: Books, user: User, key: str | None, digest: str) -> MaintenanceDone | None:
    """The maintenance booking `key` already made, or None."""
    found = None if key is None else books.store.keyed(user.name, key)
    if found is None or key is None:
        return None
    same_request(key, found.request_digest, digest)
    return MaintenanceDone(Seen(found, books.clock(), replayed=True), (), ())


def _maintenance_links(topology: Topology, body: Mapping[str, Any]) -> tuple[list[str], str]:
    link, node = body.get("link"), body.get("node")
    if (link is None) == (node is None):
        raise InputError("link", "name exactly one of 'link' or 'node'")
    if link is not None:
        topology.require_link(link, "link")
        return [str(link)], f"link {link}"
    topology.require_node(str(node), "node")
    return sorted({hop.link for hop in topology.hops(str(node))}), f"node {node}"


def _uses(r: Reservation, links: list[str], start: int, end: int, now: int) -> bool:
    if not counting_at(now)(r) or r.end <= start or r.start >= end:
        return False
    return any(link in links for a in r.allocations for link in a.path.links)


def _moves(
    books: Books,
    plans: list[tuple[Reservation, Replanned | str]],
    links: list[str],
    now: int,
) -> tuple[list[Step], list[Rerouted], list[tuple[str, str]]]:
    """Store steps for the planned moves: failures first, so their bandwidth is free."""
    fails: list[Step] = []
    moves: list[Step] = []
    rerouted: list[Rerouted] = []
    failed: list[tuple[str, str]] = []
    for r, plan in plans:
        if isinstance(plan, str):
            why = f"maintenance on {', '.join(links)}: {plan}"
            fails.append(StateStep(r.id, State.FAILED, {"why": why}))
            failed.append((r.id, plan))
            continue
        moved = replace(
            r,
            start=max(r.start, now),
            allocations=plan.allocations,
            plan=kept_facts(r.plan, plan.plan),
            updated_at=now,
        )
        moves.append(books.write_step(moved, "rerouted", expected=r.version))
        rerouted.append(Rerouted(r.id, plan.allocations))
    return fails + moves, rerouted, failed


def _plan_around(
    books: Books,
    affected: list[Reservation],
    links: list[str],
    start: int,
    end: int,
    now: int,
) -> list[tuple[Reservation, Replanned | str]]:
    """Plans in the mirror with the links blocked; the mirror is rebuilt afterwards."""
    mirror = books.mirror
    with mirror.lock:
        network = mirror.network
        for r in affected:
            if r.id in network.bookings:
                network.release(r.id)
        block = _blocking_booking(books.topology, links, start, end)
        network.commit(block)
        plans: list[tuple[Reservation, Replanned | str]] = []
        for r in affected:
            request = fixed_request(r, max(r.start, now))
            decision, booking = mirror.planner.decide(request)
            if booking is None or not isinstance(decision, Reserved):
                plans.append((r, reason_of(decision) or "no other path"))
                continue
            labels = mirror.relabel(r, booking.start, booking.end, booking.allocations)
            if isinstance(labels, str):
                plans.append((r, labels))
                continue
            network.commit(booking)
            plans.append((r, Replanned(booking.allocations, {**plan_facts(decision), **labels})))
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


def tick(books: Books) -> int:
    """Record the transitions the clock has made (held->expired, reserved->active->finished)."""
    now = books.clock()
    moved = 0
    for r in books.store.due(now):
        state = state_at(r.state, r.start, r.end, now, r.hold_expires_at)
        if state == r.state:
            continue
        try:
            books.store.set_state(r.id, state, now=now, actor="system", detail={"why": "clock"})
            moved += 1
        except (InputError, ConflictError):
            continue  # another replica recorded it first
    books.mirror.catch_up(now)
    return moved
