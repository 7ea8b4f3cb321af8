"""Between stored rows and the records of `braid.app.records`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from sqlalchemy import Row, Table

from braid.adapters.store.schema import Base
from braid.app.records import AuditEntry, LinkLoad, Reservation
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.planning.lifecycle import State

RESERVATIONS: Final[Table] = Base.metadata.tables["reservations"]
PATHS: Final[Table] = Base.metadata.tables["reservation_paths"]
LOADS: Final[Table] = Base.metadata.tables["link_loads"]
LINKS: Final[Table] = Base.metadata.tables["links"]
AUDIT: Final[Table] = Base.metadata.tables["audit_log"]
STATE: Final[Table] = Base.metadata.tables["state"]
TOPOLOGY: Final[Table] = Base.metadata.tables["topology_versions"]
USERS: Final[Table] = Base.metadata.tables["users"]
TOKENS: Final[Table] = Base.metadata.tables["tokens"]

# What `counting` needs, without the JSON columns: cheap to read for every
# reservation that overlaps a write.
SCALARS: Final = tuple(c for c in RESERVATIONS.c if c.name not in {"request", "plan", "seq"})


def reservation_values(
    reservation: Reservation, *, version: int, created_at: int, updated_at: int
) -> dict[str, Any]:
    return {
        "id": reservation.id,
        "token": reservation.token,
        "owner": reservation.owner,
        "state": reservation.state.value,
        "src": reservation.src,
        "dst": reservation.dst,
        "start": reservation.start,
        "end": reservation.end,
        "symmetric": reservation.symmetric,
        "kind": reservation.kind,
        "request": dict(reservation.request),
        "plan": dict(reservation.plan),
        "hold_expires_at": reservation.hold_expires_at,
        "created_at": created_at,
        "updated_at": updated_at,
        "version": version,
        "idempotency_key": reservation.idempotency_key,
        "request_digest": reservation.request_digest,
    }


def path_values(reservation: Reservation) -> list[dict[str, Any]]:
    return [
        {
            "reservation_id": reservation.id,
            "index": index,
            "nodes": list(a.path.nodes),
            "links": list(a.path.links),
            "bandwidth": a.bandwidth,
        }
        for index, a in enumerate(reservation.allocations)
    ]


# `counts_until` of a hold without an expiry: later than any instant braid handles.
NEVER: Final = 2**62


def counts_until(state: State, end: int, hold_expires_at: int | None) -> int:
    """From when a reservation's loads stop counting (see `LinkLoadRow.counts_until`).

    The same rule as `braid.core.planning.lifecycle.counts_against_capacity`: counting
    at `now` is `now < counts_until(...)`.
    """
    if state == State.HELD:
        return NEVER if hold_expires_at is None else hold_expires_at
    if state in (State.RESERVED, State.ACTIVE):
        return end
    return 0


def load_values(reservation: Reservation, loads: Iterable[LinkLoad]) -> list[dict[str, Any]]:
    until = counts_until(reservation.state, reservation.end, reservation.hold_expires_at)
    return [
        {
            "reservation_id": reservation.id,
            "counts_until": until,
            "link_id": load.link,
            "forward": load.forward,
            "start": load.start,
            "end": load.end,
            "bandwidth": load.bandwidth,
        }
        for load in loads
    ]


def to_reservation(
    row: Row[Any] | Mapping[str, Any], allocations: Sequence[Allocation] = ()
) -> Reservation:
    """A record from a reservations row; rows without the JSON columns give empty ones."""
    values = row._mapping if isinstance(row, Row) else row
    return Reservation(
        id=values["id"],
        token=values["token"],
        owner=values["owner"],
        state=State(values["state"]),
        src=values["src"],
        dst=values["dst"],
        start=values["start"],
        end=values["end"],
        allocations=tuple(allocations),
        symmetric=bool(values["symmetric"]),
        kind=values["kind"],
        request=values.get("request") or {},
        plan=values.get("plan") or {},
        hold_expires_at=values["hold_expires_at"],
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        version=values["version"],
        idempotency_key=values.get("idempotency_key"),
        request_digest=values.get("request_digest"),
    )


def to_allocation(row: Row[Any]) -> Allocation:
    return Allocation(Path(tuple(row.nodes), tuple(row.links)), row.bandwidth)


def to_audit(row: Row[Any]) -> AuditEntry:
    return AuditEntry(
        at=row.at,
        actor=row.actor,
        reservation_id=row.reservation_id,
        action=row.action,
        from_state=row.from_state,
        to_state=row.to_state,
        detail=row.detail or {},
    )


def audit_values(entry: AuditEntry) -> dict[str, Any]:
    return {
        "at": entry.at,
        "actor": entry.actor,
        "reservation_id": entry.reservation_id,
        "action": entry.action,
        "from_state": entry.from_state,
        "to_state": entry.to_state,
        "detail": dict(entry.detail),
    }
