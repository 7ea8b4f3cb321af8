"""REST bodies and queries -> the planner's request contract (one validation for all).

The wire speaks ISO 8601; the planner speaks epoch seconds. Converting here,
then validating with `parse_request`, means REST, CLI and `braid plan` reject
the same inputs with the same field names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from braid.core.errors import InputError
from braid.core.model.instants import format_instant, parse_instant, readable_instant
from braid.core.model.topology import Topology
from braid.core.planning.decisions import Invalid, Refused
from braid.core.planning.requests import Request, parse_request

INSTANT_FIELDS: Final = (
    "start", "end", "not_before", "not_after", "window_start", "window_end", "deadline",
)  # fmt: skip
RESERVABLE_MODES: Final = ("fixed", "earliest", "max-bandwidth", "volume")
SERVICE_FIELDS: Final = ("hold", "description", "protect", "policing")


def to_request(
    body: Mapping[str, Any],
    request_id: str,
    topology: Topology,
    now: int,
    *,
    booking: bool,
    zone: str | None = None,
) -> Request:
    """Validate a REST body (or availability query) as a planner request; local times
    without a zone are read in `zone` (the caller's tz setting), day words against `now`."""
    if not isinstance(body, Mapping):
        raise InputError("", "the body must be a JSON object")
    data: dict[str, Any] = {k: v for k, v in body.items() if k not in SERVICE_FIELDS}
    if "id" in data or "op" in data:
        raise InputError("id" if "id" in data else "op", "set by the server; remove it")
    mode = data.get("mode", "fixed")
    if booking and mode not in RESERVABLE_MODES:
        raise InputError("mode", f"a reservation's mode is one of {', '.join(RESERVABLE_MODES)}")
    if mode == "tenant":
        raise InputError("mode", "tenant allocation is not offered over REST yet; use braid plan")
    for name in INSTANT_FIELDS:
        if data.get(name) is not None:
            data[name] = parse_instant(data[name], name, zone=zone, now=now)
    if booking and mode == "max-bandwidth":
        data["reserve"] = True
    _not_in_the_past(data, mode, now)
    request = parse_request({**data, "id": request_id}, topology)
    assert isinstance(request, Request)
    return request


def _not_in_the_past(data: dict[str, Any], mode: str, now: int) -> None:
    # "Not before" a past instant means "as soon as possible", and the slots of a
    # window that began in the past are those from now on: both clamp to now. A
    # client's "now" reaches the server a moment late, so refusing would race.
    clamped = {
        "earliest": "not_before",
        "all-slots": "window_start",
        "volume": "not_before",
        "quickest": "not_before",
    }.get(mode)
    if clamped is not None:
        if isinstance(data.get(clamped), int) and data[clamped] < now:
            data[clamped] = now
        return
    if isinstance(data.get("start"), int) and data["start"] < now:
        raise InputError(
            "start", f"is in the past; the earliest possible start is now ({format_instant(now)})"
        )


def readable_reason(decision: Refused | Invalid) -> str:
    """Why the planner booked nothing, its instants written in ISO 8601 as the wire speaks."""
    return decision.text(readable_instant) if isinstance(decision, Refused) else decision.reason
