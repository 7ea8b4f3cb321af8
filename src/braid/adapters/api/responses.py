"""Error responses as documented in /openapi.json (all share `ErrorOut`)."""

from __future__ import annotations

from typing import Any

from braid.adapters.api.models import ErrorOut


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each status documented with the one error shape."""
    return {status: {"model": ErrorOut, "description": _WHY[status]} for status in statuses}


_WHY = {
    401: "missing or unknown bearer token",
    403: "the caller may not do this",
    404: "no such reservation",
    409: "valid, but cannot be granted: see `alternatives` (ready-to-post bodies) and `conflicts`",
    413: "the body is too large",
    422: "bad input: `field` names what to fix",
}
