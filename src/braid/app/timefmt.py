"""ISO 8601 on the wire, integer epoch seconds inside."""

from __future__ import annotations

from datetime import UTC, datetime

from braid.core.errors import InputError


def parse_instant(value: object, field: str) -> int:
    """An ISO 8601 instant with an explicit offset ('Z' or '+02:00'), as epoch seconds."""
    if not isinstance(value, str):
        raise InputError(field, "expected an ISO 8601 time such as 2027-01-01T10:00:00Z")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InputError(field, f"cannot read {value!r} as an ISO 8601 time") from exc
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise InputError(
            field, f"{value!r} has no UTC offset; add one, e.g. {value}Z or {value}+00:00"
        )
    if parsed.microsecond:
        raise InputError(field, "give whole seconds")
    return int(parsed.timestamp())


def format_instant(epoch: int | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")
