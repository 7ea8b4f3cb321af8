"""The service's results as the JSON the REST API sends (and the CLI shows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from braid.adapters.plan_contract import encode, paths_field, profile_field
from braid.app.records import AuditEntry
from braid.app.reservations.link_state import LinkStateDone
from braid.app.reservations.plan_facts import policing_of, protection_of
from braid.app.reservations.requests_rest import readable_reason
from braid.app.reservations.results import Availability, MaintenanceDone, Page, Seen
from braid.app.reservations.volumes import profile_of
from braid.core.model.instants import format_instant
from braid.core.model.units import to_mbps
from braid.core.planning.decisions import Refused, Reserved, VolumeReserved
from braid.core.provisioning.status import Status


def reservation_view(seen: Seen) -> dict[str, Any]:
    r, state = seen.record, seen.state
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
        "vlans": vlans_view(plan, len(r.allocations)),
        "protection": protection_view(plan),
        "policing": policing_of(plan).value,
        "degraded": degraded_view(plan),
        "provisioning": provisioning_view(seen.provisioning),
        "hold_expires_at": format_instant(r.hold_expires_at),
        "created_at": format_instant(r.created_at),
        "updated_at": format_instant(r.updated_at),
        "version": r.version,
        "request": dict(r.request),
        "volume": volume_view(seen),
    }


def volume_view(seen: Seen) -> dict[str, Any] | None:
    """A volume reservation's bytes, completion, peak and steps; None for any other kind."""
    profile = profile_of(seen.record)
    if profile is None:
        return None
    return {
        "bytes": seen.record.plan.get("volume"),
        "completion": format_instant(profile.end),
        "peak": to_mbps(profile.peak),
        "profile": profile_instants(profile_field(profile)),
    }


def profile_instants(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**step, "start": format_instant(step["start"]), "end": format_instant(step["end"])}
        for step in steps
    ]


def provisioning_view(status: Status | None) -> dict[str, Any] | None:
    """What the switches hold of a reservation; null where braid does not program them."""
    if status is None:
        return None
    return {
        "state": status.phase.value,
        "switch": status.switch,
        "error": status.error,
        "since": format_instant(status.since),
        "verified": status.verified,
        "check": status.check,
    }


def protection_view(plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """A protected reservation's two paths (with their VLANs) and which carries its traffic."""
    paths = protection_of(plan)
    if paths is None:
        return None
    vlans = plan.get("vlans") if isinstance(plan.get("vlans"), list) else [None, None]
    assert isinstance(vlans, list)
    return {
        "on": "standby" if paths.on_standby else "primary",
        "primary": {**paths.primary.as_dict(), "vlan": vlans[0]},
        "standby": {**paths.standby.as_dict(), "vlan": vlans[-1]},
        "shared_links": list(plan["protection"].get("shared_links", [])),
    }


def degraded_view(plan: Mapping[str, Any]) -> dict[str, Any] | None:
    found = plan.get("degraded")
    if not isinstance(found, Mapping):
        return None
    return {**found, "since": format_instant(found.get("since"))}


def link_state_view(done: LinkStateDone) -> dict[str, Any]:
    return {
        "link": done.link,
        "state": done.state,
        "changed": done.changed,
        "topology_version": done.topology_version,
        "moved": [{"id": m.id, "action": m.action, "why": m.why} for m in done.moves],
    }


def vlans_view(plan: Mapping[str, Any], paths: int) -> list[dict[str, Any]]:
    """Each path's VLAN, assigned at booking (null for reservations booked before braid did).

    A protected reservation's VLANs are stored primary first: its one path's
    VLAN is the one of the side carrying its traffic.
    """
    protected = protection_of(plan)
    vlans = plan.get("vlans")
    if protected is not None and isinstance(vlans, list) and len(vlans) == 2:
        return [{"path": 0, "vlan": vlans[1] if protected.on_standby else vlans[0]}]
    if not isinstance(vlans, list) or len(vlans) != paths:
        return [{"path": i, "vlan": None} for i in range(paths)]
    return [{"path": i, "vlan": vlan} for i, vlan in enumerate(vlans)]


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


def page_view(page: Page) -> dict[str, Any]:
    return {"reservations": [reservation_view(s) for s in page.reservations], "next": page.next}


def maintenance_view(done: MaintenanceDone) -> dict[str, Any]:
    return {
        "maintenance": reservation_view(done.maintenance),
        "rerouted": [{"id": r.id, "paths": paths_field(r.allocations)} for r in done.rerouted],
        "failed": [{"id": rid, "why": why} for rid, why in done.failed],
    }


def free_windows(slots: list[list[int]], duration: int) -> list[list[str | None]]:
    """Each all-slots span's free time: `slots` are the contract's feasible *start*
    times [a, b) (whole seconds, so the last start is b - 1); a booking of `duration`
    fits anywhere in [a, b - 1 + duration), which is what a person calls the free slot."""
    if duration <= 0:
        return []
    return [[format_instant(a), format_instant(b - 1 + duration)] for a, b in slots]


def availability_view(answer: Availability) -> dict[str, Any]:
    """The plan contract's decision, with instants in ISO 8601 as the wire speaks.

    A booking that fits is "available": nothing was booked.
    """
    out = encode(answer.decision)
    if isinstance(answer.decision, Reserved | VolumeReserved):
        out["status"] = "available"
    return with_instants(out, answer)


def with_instants(decision: Mapping[str, Any], answer: Availability) -> dict[str, Any]:
    out = dict(decision)
    if isinstance(answer.decision, Refused) and "reason" in out:
        out["reason"] = readable_reason(answer.decision)
    for name in ("start", "end", "completion", "earliest_completion"):
        if isinstance(out.get(name), int):
            out[name] = format_instant(out[name])
    if "profile" in out:
        out["profile"] = profile_instants(out["profile"])
    if "slots" in out:
        out["free"] = free_windows(out["slots"], answer.request.duration)
        out["slots"] = [[format_instant(a), format_instant(b)] for a, b in out["slots"]]
    alternatives = out.get("alternatives")
    if isinstance(alternatives, dict) and "earliest_start" in alternatives:
        out["alternatives"] = {
            **alternatives,
            "earliest_start": format_instant(alternatives["earliest_start"]),
        }
    return out
