"""Local times: a wall-clock time in an IANA zone, and day words relative to `now`.

`parse_instant` (instants.py) stays the one way in; it hands this module the
texts that carry no UTC offset. The rules, which docs/service.md repeats:

- A zone is an IANA name (`Europe/Paris`, `America/Chicago`, `UTC`) written
  after the time: `2026-12-04 17:00 America/Chicago`. Without one, the
  caller's default zone applies (`--tz`, `BRAID_TZ`, a user's `tz` setting);
  with neither, the time is refused: braid never guesses UTC.
- `today 09:30`, `tomorrow 08:00`, `friday 17:00` (or `fri 17:00`) are read in
  that zone relative to `now`; a weekday is its next occurrence at or after
  now (today if its time is still ahead, else a week on). `now`, `now+2h`,
  `now - 30m` need no zone.
- A wall time the clocks skip (the spring-forward gap) is refused; one they
  pass twice (the autumn fold) is the earlier of the two, as a person who
  says "01:30" that night most likely means the first.

The tz database is read through `zoneinfo` (stdlib, with the `tzdata` package
where the system has none): data, like a table; the clock is never read here.
"""

from __future__ import annotations

import difflib
import re
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from braid.core.errors import InputError
from braid.core.model.units import parse_duration, shown

WEEKDAYS: Final = {
    **{name: n for n, name in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))},
    **{
        name: n
        for n, name in enumerate(
            ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
        )
    },
    "tues": 1,
    "thur": 3,
    "thurs": 3,
}
DAY_WORDS: Final = ("today", "tomorrow", *WEEKDAYS)
# Names in the tz database that mean "wherever this machine is" or nothing at all:
# an input naming them would read differently on another server.
_NOT_A_PLACE: Final = frozenset({"localtime", "Factory", "posixrules"})
_ZONE_TEXT: Final = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*")
_TIME_OF_DAY: Final = re.compile(r"([0-9]{1,2})(?::([0-9]{2}))?(?::([0-9]{2}))?")
_NOW: Final = re.compile(r"now *(?:([+-]) *(.+?))? *")
EXAMPLE_ZONE: Final = "Europe/Paris"


def zone_named(name: object, field: str) -> ZoneInfo:
    """The IANA zone `name`, or an InputError naming `field` (with a close match if any)."""
    if not isinstance(name, str) or not _ZONE_TEXT.fullmatch(name) or name in _NOT_A_PLACE:
        raise InputError(
            field, f"{shown(name)} is not a time zone; give an IANA name such as {EXAMPLE_ZONE}"
        )
    if name in _zone_names():
        return ZoneInfo(name)
    raise InputError(field, f"unknown time zone {name!r}{_did_you_mean(name)}")


def check_zone(name: str | None, field: str) -> str | None:
    """`name` if it is a zone (None stays None): for settings stored as text."""
    if name is not None:
        zone_named(name, field)
    return name


@cache
def _zone_names() -> frozenset[str]:
    try:
        return frozenset(available_timezones()) - _NOT_A_PLACE
    except (OSError, ZoneInfoNotFoundError):  # pragma: no cover - no tz data at all
        return frozenset()


def _did_you_mean(name: str) -> str:
    names = _zone_names()
    folded = {n.lower(): n for n in names}
    if name.lower() in folded:  # names are case-sensitive: Europe/Paris, not europe/paris
        return f"; did you mean {folded[name.lower()]}?"
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


def no_zone_hint(value: str) -> str:
    """What to add to a local time that has neither an offset nor a zone. Both ways,
    and never UTC by default: a `Z` added without thought books the wrong hour."""
    zoned = f"a zone (e.g. '{value} {EXAMPLE_ZONE}')"
    # An offset follows a time of day in ISO 8601; a day word or a bare date takes a zone.
    offset_ok = len(value) > 10 and value[:4].isdigit() and value[10] in "Tt "
    ways = f"an offset (e.g. {value}+01:00) or {zoned}" if offset_ok else zoned
    return (
        f"{value!r} has no UTC offset and no time zone; add {ways}, "
        "or set a default zone (--tz, BRAID_TZ, or your tz setting)"
    )


def split_zone(value: str) -> tuple[str, str | None]:
    """`value` less a trailing zone name, and the name (None when there is none).

    The zone is the last word when it is neither a day word nor a time: a
    time's own `Z` or `+01:00` is part of the time (`2027-01-01 09:00:00Z`).
    """
    words = value.split(" ")
    last = words[-1]
    if len(words) < 2 or not last[:1].isalpha() or last.lower() in (*DAY_WORDS, "z"):
        return value, None
    return " ".join(words[:-1]).rstrip(" "), last


def read_relative(text: str, field: str, zone: ZoneInfo | None, now: int | None) -> int | None:
    """`now[+-duration]` or `DAYWORD TIME` as epoch seconds; None if `text` is neither."""
    found = _NOW.fullmatch(text.lower())
    if found is not None:
        moment = _need_now(text, field, now)
        if found[2] is None:
            return moment
        step = parse_duration(found[2], field)
        return moment - step if found[1] == "-" else moment + step
    words = text.split()
    if not words or words[0].lower() not in DAY_WORDS:
        return None
    if len(words) != 2:
        raise InputError(field, f"{text!r}: give a day and a time of day, e.g. friday 17:00")
    wall = _time_of_day(words[1], field, text)
    moment = _need_now(text, field, now)
    if zone is None:
        raise InputError(field, no_zone_hint(text))
    return _on_day(words[0].lower(), wall, zone, moment, field)


def _need_now(text: str, field: str, now: int | None) -> int:
    if now is None:
        raise InputError(
            field,
            f"{text!r} is relative to the current time, which is not known here; "
            f"give a date, e.g. 2026-12-04 17:00 {EXAMPLE_ZONE}",
        )
    return now


def _time_of_day(word: str, field: str, text: str) -> time:
    found = _TIME_OF_DAY.fullmatch(word)
    if found is None or found[2] is None:
        raise InputError(field, f"{text!r}: write the time of day as HH:MM or HH:MM:SS")
    hour, minute, second = int(found[1]), int(found[2]), int(found[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise InputError(field, f"{text!r}: {word} is not a time of day")
    return time(hour, minute, second)


def _on_day(word: str, wall: time, zone: ZoneInfo, now: int, field: str) -> int:
    today = datetime.fromtimestamp(now, zone).date()
    if word in ("today", "tomorrow"):
        return wall_to_epoch(_at(today + timedelta(days=word == "tomorrow"), wall), zone, field)
    ahead = (WEEKDAYS[word] - today.weekday()) % 7
    day = today + timedelta(days=ahead)
    if ahead == 0 and _at(day, wall) < datetime.fromtimestamp(now, zone).replace(tzinfo=None):
        day += timedelta(days=7)  # today's has passed: the next occurrence is a week on
    return wall_to_epoch(_at(day, wall), zone, field)


def _at(day: date, wall: time) -> datetime:
    return datetime.combine(day, wall)


def wall_to_epoch(naive: datetime, zone: ZoneInfo, field: str) -> int:
    """Epoch seconds of wall time `naive` in `zone`: a skipped time is refused, a time
    passed twice is the earlier."""
    first = naive.replace(tzinfo=zone, fold=0)
    try:
        epoch = int(first.timestamp())
        back = datetime.fromtimestamp(epoch, zone).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError) as exc:  # near year 1 or 9999
        raise InputError(field, f"{naive.isoformat()} lies outside the years 1 to 9999") from exc
    if back != naive:  # fold=0 reads a skipped time with the offset before the jump
        raise InputError(field, _gap_message(naive, zone))
    return epoch


def _gap_message(naive: datetime, zone: ZoneInfo) -> str:
    before = naive.replace(tzinfo=zone, fold=0).utcoffset() or timedelta()
    after = naive.replace(tzinfo=zone, fold=1).utcoffset() or timedelta()
    jump = abs(after - before)
    return (
        f"{naive.isoformat(sep=' ')} does not exist in {zone.key}: the clocks skip "
        f"{_span(jump)} there that night; give a time outside the gap, or an offset"
    )


def _span(delta: timedelta) -> str:
    minutes = int(delta.total_seconds()) // 60
    hours, rest = divmod(minutes, 60)
    if rest == 0:
        return f"{hours} hour{'s' * (hours != 1)}"
    return f"{minutes} minutes"


def format_in(epoch: int, zone: ZoneInfo) -> str:
    """ISO 8601 with the zone's offset at that instant: 2026-12-04T17:00:00-06:00."""
    return datetime.fromtimestamp(epoch, UTC).astimezone(zone).isoformat()


def readable_in(epoch: int, zone: ZoneInfo) -> str:
    """For people: 2026-12-04 17:00:00 CST (-06:00); a zone without a letters
    abbreviation shows its offset alone (2026-12-04 17:00:00 +03:00)."""
    local = datetime.fromtimestamp(epoch, UTC).astimezone(zone)
    offset = local.isoformat()[19:]
    abbreviation = local.tzname() or ""
    wall = local.replace(tzinfo=None).isoformat(sep=" ")  # '0999-…': strftime drops the 0
    if abbreviation and abbreviation[0].isalpha():
        return f"{wall} {abbreviation} ({offset})"
    return f"{wall} {offset}"
