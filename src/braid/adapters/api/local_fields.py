"""A response's instants, rendered again in a time zone beside the UTC ones.

The REST API writes every instant as ISO 8601 UTC (`2030-01-01T10:00:00Z`,
`format_instant`), and that stays the machine field. Asked for a zone, each
instant field `X` gains `X_local`, the same instant with the zone's offset at
that moment (`2030-01-01T11:00:00+01:00`), and a list of instants (`slots`,
`free`) gains `X_local` of the same shape; the zone is said once, as
`local_tz`, at the top. People's prose (`message`, `reason`) has its UTC
instants rewritten in place, as a person in the zone reads them.

Left as they are: `request` (the body the client sent, echoed) and
`alternatives` (bodies to post as they are: an extra field would be refused).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

from braid.core.model.local_time import readable_in, zone_named

# Exactly what `format_instant` writes: whole seconds, UTC as `Z`.
_UTC_INSTANT: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_AS_SENT: Final = frozenset({"request", "alternatives"})
_PROSE: Final = frozenset({"message", "reason"})
SUFFIX: Final = "_local"
ZONE_FIELD: Final = "local_tz"


def in_zone(content: Any, zone: str) -> Any:
    """`content` (decoded JSON) with the local renderings added; `zone` is a known
    IANA name. A top-level object says the zone as `local_tz`."""
    out = _walk(content, zone_named(zone, "tz"))
    if isinstance(out, dict):
        out[ZONE_FIELD] = zone
    return out


def _walk(value: Any, zone: ZoneInfo) -> Any:
    if isinstance(value, dict):
        return _object(value, zone)
    if isinstance(value, list):
        return [_walk(item, zone) for item in value]
    return value


def _object(found: dict[str, Any], zone: ZoneInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in found.items():
        if key in _AS_SENT:
            out[key] = value
        elif key in _PROSE and isinstance(value, str):
            out[key] = local_prose(value, zone)
        elif _instants_only(value):
            out[key] = value
            out[key + SUFFIX] = _local(value, zone)
        else:
            out[key] = _walk(value, zone)
    return out


def _instants_only(value: Any) -> bool:
    """An instant, or a (nested) list of instants and nulls holding at least one."""
    if isinstance(value, str):
        return _UTC_INSTANT.fullmatch(value) is not None
    if isinstance(value, list) and value:
        leaves = [item for item in value if item is not None]
        return bool(leaves) and all(_instants_only(item) for item in leaves)
    return False


def _local(value: Any, zone: ZoneInfo) -> Any:
    if isinstance(value, list):
        return [None if item is None else _local(item, zone) for item in value]
    # The pattern matched: `fromisoformat` reads it (Z included), no other check needed.
    try:
        return datetime.fromisoformat(value).astimezone(zone).isoformat()
    except (OverflowError, ValueError):  # past year 9999 (or before 1) in that zone
        return value  # the same instant, still true, in UTC's offset


def local_prose(text: str, zone: ZoneInfo) -> str:
    """`text` with each UTC instant in it written for a person in `zone`
    (2030-01-01 11:00:00 CET (+01:00)); one the zone's calendar cannot reach stays UTC."""
    return _UTC_INSTANT.sub(lambda found: _readable(found[0], zone), text)


def _readable(instant: str, zone: ZoneInfo) -> str:
    try:
        return readable_in(int(datetime.fromisoformat(instant).timestamp()), zone)
    except (OverflowError, ValueError):
        return instant
