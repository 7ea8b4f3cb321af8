"""A volume request through `InterdomainService`: its REST fields and its REST view.

`POST /v1/interdomain/reservations` with `volume` (instead of `bandwidth`),
`deadline` and optionally `not_before` (default: now) and `max_rate` moves
that many bytes between the two site points by the deadline, as early as
the domains' offers over time allow (app/negotiation/volume).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from braid.app.negotiation.volume import VolumeRequest
from braid.app.negotiation.volume_modify import VolumeChange
from braid.core.errors import InputError
from braid.core.model.instants import format_instant, parse_instant
from braid.core.model.units import parse_bandwidth, parse_volume, to_mbps
from braid.core.rules.enforcement import Policing, parse_policing

__all__ = [
    "VOLUME_FIELDS",
    "check_volume",
    "check_volume_change",
    "check_volume_only",
    "is_volume",
    "volume_view",
]

# Fields only a volume request has (a window request with one of them is refused).
VOLUME_FIELDS = ("volume", "deadline", "not_before", "max_rate")


def is_volume(body: Mapping[str, Any]) -> bool:
    return body.get("volume") is not None


def check_volume_only(given: Iterable[str]) -> None:
    """A volume request sets none of a window request's fields (`given`: those the caller
    set, as its wire format spells them); errors name the field."""
    for other in given:
        raise InputError(other, "not with volume: a volume is sent by `deadline`")


def check_volume(
    body: Mapping[str, Any],
    rid: str,
    ends: Mapping[str, tuple[str, str]],
    now: int,
    max_paths: int,
    zone: str | None = None,
) -> tuple[VolumeRequest, dict[str, Any]]:
    """The volume request read from its REST fields, and its REST spelling; errors name the
    field. Local times without a zone are read in `zone` (the caller's tz setting). The
    request's own checks are `reserve_volume`'s, for every front end alike."""
    window = [f for f in ("bandwidth", "start", "end", "strategy") if body.get(f) is not None]
    check_volume_only(window)
    policing = parse_policing(body.get("policing", Policing.SOFT.value))
    volume = parse_volume(body["volume"], "volume")
    if body.get("deadline") is None:
        raise InputError("deadline", "missing: a volume needs the instant it must be done by")
    deadline = parse_instant(body["deadline"], "deadline", zone=zone, now=now)
    given = body.get("not_before")
    not_before = now if given is None else parse_instant(given, "not_before", zone=zone, now=now)
    max_rate = None
    if body.get("max_rate") is not None:
        max_rate = parse_bandwidth(body["max_rate"], "max_rate")
    request = VolumeRequest(
        rid, *ends["src"], *ends["dst"], volume, not_before, deadline, max_paths, max_rate,
        policing=policing,
    )  # fmt: skip
    rest = {
        "src": {"domain": ends["src"][0], "point": ends["src"][1]},
        "dst": {"domain": ends["dst"][0], "point": ends["dst"][1]},
        "volume_bytes": volume,
        "not_before": format_instant(not_before),
        "deadline": format_instant(deadline),
        "max_paths": max_paths or None,
        "max_rate": None if max_rate is None else to_mbps(max_rate),
        "policing": policing.value,
    }
    return request, rest


def check_volume_change(body: Mapping[str, Any], now: int, zone: str | None) -> VolumeChange:
    """A volume modify's REST fields (`volume`, `deadline`, `max_rate`; all optional);
    a window's field is refused, naming it. The request's own checks are modify_volume's."""
    fixed = ("bandwidth", "start", "end", "strategy", "max_paths", "not_before", "policing")
    check_volume_only([f for f in fixed if body.get(f) is not None])
    volume = None if body.get("volume") is None else parse_volume(body["volume"], "volume")
    deadline = None
    if body.get("deadline") is not None:
        deadline = parse_instant(body["deadline"], "deadline", zone=zone, now=now)
    max_rate = None
    if body.get("max_rate") is not None:
        max_rate = parse_bandwidth(body["max_rate"], "max_rate")
    change = VolumeChange(volume, deadline, max_rate)
    if change.empty():
        raise InputError("body", "nothing to change: give volume, deadline or max_rate")
    return change


def volume_view(
    body: Mapping[str, Any] | None, entry_id: str, owner: str, request: Mapping[str, Any]
) -> dict[str, Any]:
    """The REST view of a stored volume reservation (`lookup_volume`'s answer)."""
    if body is None:  # the owner is written first: the negotiation is still under way
        return {"id": entry_id, "owner": owner, "status": "negotiating", **request}
    paths = body.get("paths", [])
    completion = body.get("completion")
    view: dict[str, Any] = {
        "id": entry_id,
        "owner": owner,
        **request,
        "status": body["status"],
        "reason": body.get("reason", ""),
        "transaction": body.get("transaction", ""),
        "volume_bytes": body["volume_bytes"],
        # As the version that stands asked (a modify changes them).
        "deadline": format_instant(body["deadline"]),
        **({"max_rate": _mbps(body["max_rate"])} if "max_rate" in body else {}),
        "moved_bytes": body.get("moved_bytes", 0),
        "completion": None if completion is None else format_instant(completion),
        "paths": [{"domains": p} for p in paths],
        "profile": [_history_view(step) for step in body.get("history", [])]
        + [_step_view(step) for step in body.get("steps", [])],
    }
    if body["status"] == "failed":
        view["most_by_deadline"] = body.get("most_by_deadline", 0)
        earliest = body.get("earliest_completion")
        view["earliest_completion"] = None if earliest is None else format_instant(earliest)
    return view


def _mbps(bps: int | None) -> float | None:
    return None if bps is None else to_mbps(bps)


def _history_view(step: Sequence[int]) -> dict[str, Any]:
    """A step an earlier version carried before it was modified (one rate, no paths)."""
    start, end, rate = step
    return {"start": format_instant(start), "end": format_instant(end), "rate": to_mbps(rate)}


def _step_view(step: Mapping[str, Any]) -> dict[str, Any]:
    rates = step["path_rates"]
    return {
        "start": format_instant(step["start"]),
        "end": format_instant(step["end"]),
        "rate": to_mbps(sum(rates)),
        "path_rates": [to_mbps(r) for r in rates],
    }
