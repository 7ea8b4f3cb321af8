"""Instants: integer epoch seconds inside; ISO 8601, local times or epoch seconds outside.

Every way in (plan JSON lines, REST, the CLI) reads instants with
`parse_instant`, so each accepts the same forms and refuses the same mistakes
(a time with neither a UTC offset nor a zone, fractions of a second) with the
same words. Local times in an IANA zone and day words (`friday 17:00`) are
read by `local_time`, with the caller's default zone and `now` passed in.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from braid.core.errors import InputError
from braid.core.model.local_time import (
    format_in,
    no_zone_hint,
    read_relative,
    readable_in,
    split_zone,
    wall_to_epoch,
    zone_named,
)
from braid.core.model.units import MAX_INSTANT, MIN_INSTANT, parse_seconds, shown

_FORMS = (
    "an ISO 8601 time such as 2026-12-04T17:00:00Z, a local time such as "
    "2026-12-04 17:00 Europe/Paris or friday 17:00, or epoch seconds"
)


def parse_instant(
    value: object, field: str, *, zone: str | None = None, now: int | None = None
) -> int:
    """Epoch seconds, an ISO 8601 instant with an offset ('Z' or '+02:00'), or a local
    time: in the zone named after it (`2026-12-04 17:00 America/Chicago`), else in
    `zone` (the caller's default, e.g. --tz); `today`/`tomorrow`/weekday phrases and
    `now+2h` are read against `now`. See `local_time` for the rules."""
    instant = _read_instant(value, field, zone, now)
    if not MIN_INSTANT <= instant <= MAX_INSTANT:
        span = "0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"
        raise InputError(field, f"must lie between {span}, got {shown(value)}")
    return instant


def _read_instant(value: object, field: str, zone: str | None, now: int | None) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return parse_seconds(value, field)
    if not isinstance(value, str):
        raise InputError(field, f"expected {_FORMS}")
    _plain_text(value, field)
    if len(value) > 10 and value[4:5] == value[7:8] == "-" and value[10] not in "Tt ":
        raise InputError(field, f"{shown(value)}: join the date and the time with 'T'")
    if value.strip().lstrip("-").isdigit():
        return parse_seconds(value, field)
    words = " ".join(word for word in value.split(" ") if word)
    if words.lower().startswith("now"):  # `now + 2 days` ends in no zone
        return read_relative(words, field, None, now) or _need_a_date(value, field)
    return _read_text(value, words, field, zone, now)


def _read_text(value: str, words: str, field: str, zone: str | None, now: int | None) -> int:
    """A date and time (with an offset, a zone, or neither), or a day-word phrase."""
    text, named = split_zone(words)
    local = zone_named(named, field) if named else _default_zone(zone)
    relative = read_relative(text, field, local, now)
    if relative is not None:
        return relative
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InputError(field, f"cannot read {value!r} as a time; write {_FORMS}") from exc
    if parsed.microsecond:
        raise InputError(field, "give whole seconds")
    if parsed.tzinfo is None:
        if local is None:
            raise InputError(field, no_zone_hint(value))
        return wall_to_epoch(parsed, local, field)
    if named:
        raise InputError(field, f"{value!r} has both an offset and a zone; give one of them")
    try:
        return int(parsed.timestamp())
    except (OverflowError, ValueError) as exc:  # an offset past year 1 or 9999
        raise InputError(field, f"{value!r} lies outside the years 1 to 9999") from exc


def _need_a_date(value: str, field: str) -> int:
    raise InputError(field, f"cannot read {value!r} as a time; use now, now+2h or now-30m")


def _default_zone(zone: str | None) -> ZoneInfo | None:
    # The caller's default (--tz, a user's setting) was checked when it was set;
    # a bad one is still named as what it is, not as the instant's fault.
    return None if zone is None else zone_named(zone, "tz")


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


def format_instant_in(epoch: int | None, zone: str | None) -> str | None:
    """ISO 8601 with the offset `zone` has at that instant (2026-12-04T17:00:00-06:00);
    UTC's `Z` form without a zone. Reads back with `parse_instant` to the same epoch."""
    if epoch is None or zone is None:
        return format_instant(epoch)
    return format_in(epoch, zone_named(zone, "tz"))


def readable_instant_in(epoch: int, zone: str | None) -> str:
    """An instant for a person in `zone` (2026-12-04 17:00:00 CST (-06:00)), UTC
    without one; beyond the calendar (an open end), epoch seconds as `readable_instant`."""
    if zone is None:
        return readable_instant(epoch)
    place = zone_named(zone, "tz")
    try:
        return readable_in(epoch, place)
    except (OverflowError, OSError, ValueError):
        return str(epoch)


def readable_instant(epoch: int) -> str:
    """An instant for a person: ISO 8601 where the calendar reaches (years 1 to 9999),
    epoch seconds beyond it (an open end, `FOREVER`)."""
    try:
        return format_instant(epoch) or str(epoch)
    except (OverflowError, OSError, ValueError):
        return str(epoch)
