"""Instants: integer epoch seconds inside; ISO 8601 with an offset, or epoch seconds, outside.

Every way in (plan JSON lines, REST, the CLI) reads instants with
`parse_instant`, so each accepts both forms and refuses the same mistakes
(a time without a UTC offset, fractions of a second) with the same words.
"""

from __future__ import annotations

from datetime import UTC, datetime

from braid.core.errors import InputError
from braid.core.model.units import MAX_INSTANT, MIN_INSTANT, parse_seconds, shown


def parse_instant(value: object, field: str) -> int:
    """Epoch seconds, or an ISO 8601 instant with an explicit offset ('Z' or '+02:00')."""
    instant = _read_instant(value, field)
    if not MIN_INSTANT <= instant <= MAX_INSTANT:
        span = "0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"
        raise InputError(field, f"must lie between {span}, got {shown(value)}")
    return instant


def _read_instant(value: object, field: str) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return parse_seconds(value, field)
    if not isinstance(value, str):
        raise InputError(
            field, "expected an ISO 8601 time such as 2027-01-01T10:00:00Z, or epoch seconds"
        )
    _plain_text(value, field)
    if len(value) > 10 and value[4:5] == value[7:8] == "-" and value[10] not in "Tt ":
        raise InputError(field, f"{shown(value)}: join the date and the time with 'T'")
    if value.strip().lstrip("-").isdigit():
        return parse_seconds(value, field)
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
    try:
        return int(parsed.timestamp())
    except (OverflowError, ValueError) as exc:  # an offset past year 1 or 9999
        raise InputError(field, f"{value!r} lies outside the years 1 to 9999") from exc


def _plain_text(value: str, field: str) -> None:
    """Refuse control and non-ASCII characters, which Python's parsers pass over.

    `datetime.fromisoformat` reads '2030-01-01T00:00:00Z\\x00' (and a NUL as the
    date-time separator) as a good instant, and `str.isdigit` takes other
    scripts' digits: a stored or echoed value would not be the one sent.
    """
    for at, char in enumerate(value):
        if not (char.isascii() and char.isprintable()):
            raise InputError(
                field, f"{shown(value)} has a character no time has ({char!r} at position {at})"
            )


def format_instant(epoch: int | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def readable_instant(epoch: int) -> str:
    """An instant for a person: ISO 8601 where the calendar reaches (years 1 to 9999),
    epoch seconds beyond it (an open end, `FOREVER`)."""
    try:
        return format_instant(epoch) or str(epoch)
    except (OverflowError, OSError, ValueError):
        return str(epoch)
