"""Stored records as the JSON the REST API and CLI show."""

from __future__ import annotations

from typing import Any

from braid.app.records import AuditEntry, Reservation
from braid.app.timefmt import format_instant
from braid.core.model.units import to_mbps
from braid.core.planning.decisions import paths_field
from braid.core.planning.lifecycle import state_at


def reservation_view(r: Reservation, now: int) -> dict[str, Any]:
    state = state_at(r.state, r.start, r.end, now, r.hold_expires_at)
    plan = dict(r.plan)
    return {
        "id": r.id,
        "token": r.token,
        "owner": r.owner,
        "state": state.value,
        "kind": r.kind,
        "src": r.src,
        "dst": r.dst,
        "start": format_instant(r.start),
        "end": format_instant(r.end),
        "bandwidth": to_mbps(r.bandwidth),
        "directional": not r.symmetric,
        "paths": paths_field(r.allocations),
        "split": plan.get("split", "flow"),
        "weights": plan.get("weights", []),
        "mdi": plan.get("mdi", 0.0),
        "resequence": plan.get("resequence", False),
        "recommended_streams": plan.get("recommended_streams", 2 * len(r.allocations)),
        "vlans": vlan_placeholders(len(r.allocations)),
        "hold_expires_at": format_instant(r.hold_expires_at),
        "created_at": format_instant(r.created_at),
        "updated_at": format_instant(r.updated_at),
        "version": r.version,
        "request": dict(r.request),
    }


def vlan_placeholders(paths: int) -> list[dict[str, Any]]:
    """One VLAN per path; the southbound assigns the numbers when it installs rules."""
    return [{"path": i, "vlan": None} for i in range(paths)]


def audit_view(entry: AuditEntry) -> dict[str, Any]:
    return {
        "at": format_instant(entry.at),
        "actor": entry.actor,
        "reservation": entry.reservation_id,
        "action": entry.action,
        "from": entry.from_state,
        "to": entry.to_state,
        "detail": dict(entry.detail),
    }
