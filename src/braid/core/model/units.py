"""Bandwidth and time units.

Inside the core, bandwidth is an integer number of bits per second, so that
bookings add and subtract exactly; inputs may be Mbit/s numbers or strings
with units, outputs are Mbit/s.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

from braid.core.errors import InputError

BPS_PER_MBPS: Final = 1_000_000

# An open-ended booking (a tenant without an end) lasts until this instant;
# far beyond any calendar a network will see, yet still an exact integer.
FOREVER: Final = 2**62
# A width larger than any link's capacity.
UNBOUNDED: Final = 1 << 80
# The largest bandwidth an input may name: 1 Pbit/s, ten times the sum of
# today's largest research backbones, and still exact in a 64-bit integer
# and a float (a '1e400G' is refused, not carried into arithmetic).
MAX_BANDWIDTH: Final = 10**15
# The longest duration an input may name: 100 years (of 365.25 days).
MAX_DURATION: Final = 3_155_760_000
# Instants an input may name: those ISO 8601 writes with four-digit years,
# 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, so every answer can say them.
MIN_INSTANT: Final = -62_135_596_800
MAX_INSTANT: Final = 253_402_300_799

_MULTIPLIERS: Final = {
    "": BPS_PER_MBPS,  # a bare number means Mbit/s
    "k": 1_000,
    "m": 1_000_000,
    "g": 1_000_000_000,
    "t": 1_000_000_000_000,
}
# Spaces only between the parts (no tabs, newlines or control characters),
# and the whole text must match: `$` alone would let a trailing newline by.
_BANDWIDTH_RE: Final = re.compile(
    r" *(?P<num>[+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?) *"
    r"(?P<prefix>[kKmMgGtT]?)(?P<suffix>bps|bit/s|b/s|bit|b)? *"
)


def parse_bandwidth(value: object, field: str = "bandwidth", *, allow_zero: bool = False) -> int:
    """Return `value` in bit/s; numbers are Mbit/s, strings may carry a unit."""
    if isinstance(value, bool) or value is None:
        raise InputError(field, f"expected a bandwidth such as 500 or '10G', got {value!r}")
    if isinstance(value, int | float):
        bps = _decimal(str(value), field, value) * BPS_PER_MBPS
    elif isinstance(value, str):
        bps = _parse_text(value, field)
    else:
        raise InputError(field, f"expected a bandwidth such as 500 or '10G', got {value!r}")
    if bps > MAX_BANDWIDTH:
        raise InputError(field, f"must be at most 1 Pbit/s (1000T), got {shown(value)}")
    exact = int(bps.to_integral_value())
    if exact < 0 or (exact == 0 and not allow_zero):
        raise InputError(field, f"must be positive, got {value!r}")
    return exact


def _parse_text(text: str, field: str) -> Decimal:
    match = _BANDWIDTH_RE.fullmatch(text)
    if match is None:
        hint = "write e.g. 500, '500M', '10G' or '2.5Gbps'"
        raise InputError(field, f"cannot read {text!r} as a bandwidth; {hint}")
    prefix = match["prefix"].lower()
    if not prefix and match["suffix"]:
        return _decimal(match["num"], field, text)  # '1000bps' is plain bit/s
    return _decimal(match["num"], field, text) * _MULTIPLIERS[prefix]


def _decimal(text: str, field: str, given: object) -> Decimal:
    try:
        number = Decimal(text)
    except InvalidOperation as exc:
        raise InputError(field, f"cannot read {text!r} as a number") from exc
    if not number.is_finite():
        raise InputError(field, f"must be a finite number, got {text!r}")
    if number > MAX_BANDWIDTH:  # over the bound in any unit; refused before any product
        raise InputError(field, f"must be at most 1 Pbit/s (1000T), got {shown(given)}")
    return number


def shown(value: object) -> str:
    """`value` as a message quotes it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:36]}...{text[-1]}"


def to_mbps(bps: int) -> int | float:
    """Bit/s as Mbit/s: an int when exact, else a float."""
    whole, rest = divmod(bps, BPS_PER_MBPS)
    return whole if rest == 0 else bps / BPS_PER_MBPS


def format_bandwidth(bps: int) -> str:
    """Human form for tables and messages: '10 Gbit/s', '2.5 Gbit/s', '500 Mbit/s'."""
    for unit, size in (("Tbit/s", 10**12), ("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3)):
        if bps >= size:
            return f"{bps / size:.4g} {unit}"
    return f"{bps} bit/s"


_DURATION = re.compile(r" *([0-9]+(?:\.[0-9]+)?) *([smhd]?) *")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object, field: str) -> int:
    """Seconds: a number, or a string with a unit: '90s', '15m', '2h', '1d'."""
    if isinstance(value, str):
        found = _DURATION.fullmatch(value.lower())
        if found is None:
            raise InputError(
                field,
                f"expected a duration such as 3600, '90s', '15m', '2h' or '1d', got {value!r}",
            )
        seconds = Decimal(found[1]) * _UNIT_SECONDS[found[2]]
        if seconds != seconds.to_integral_value():
            raise InputError(field, f"must be a whole number of seconds, got {value!r}")
        return _bounded_duration(int(seconds), value, field)
    return _bounded_duration(parse_seconds(value, field), value, field)


def _bounded_duration(seconds: int, value: object, field: str) -> int:
    if seconds < 0:
        raise InputError(field, f"must not be negative, got {value!r}")
    if seconds > MAX_DURATION:
        raise InputError(field, f"must be at most 100 years ({MAX_DURATION} s), got {shown(value)}")
    return seconds


def parse_seconds(value: object, field: str) -> int:
    """An integer number of seconds (epoch instant or duration)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(field, f"expected an integer number of seconds, got {value!r}")
    text = str(value).strip(" ")
    if not (text.isascii() and text.isprintable()):  # Decimal takes '１２' and strips '\n'
        raise InputError(field, f"expected an integer number of seconds, got {shown(value)}")
    try:
        number = Decimal(text)
    except InvalidOperation as exc:
        raise InputError(field, f"expected an integer number of seconds, got {value!r}") from exc
    if not number.is_finite() or number != number.to_integral_value():
        raise InputError(field, f"expected an integer number of seconds, got {value!r}")
    # No instant or duration an input may name reaches 10**12 s; refused before
    # int(), which '1e999999999' would not fit in memory (the exponent alone is read).
    if number and number.adjusted() >= 12:
        raise InputError(field, f"is out of range, got {shown(value)}")
    return int(number)


# Volumes are bytes: powers of 1000 for the SI units, of 1024 for the binary ones.
_VOLUME_UNITS: Final = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}
# The largest volume an input may name: 1 EB, a thousand times what the
# largest science transfers move in a campaign, still exact in int64 as bits.
MAX_VOLUME: Final = 10**18
_VOLUME_RE: Final = re.compile(r" *(?P<num>[0-9]*\.?[0-9]+) *(?P<unit>[kKmMgGtTpP]?i?[bB])? *")
_VOLUME_HINT: Final = "write e.g. 40TB, 500GiB or 1.5TB (bytes)"


def parse_volume(value: object, field: str = "volume") -> int:
    """A volume in bytes: an integer is bytes; a string may carry B, kB .. PB or KiB .. PiB.

    A lowercase 'b' after a prefix ('40Tb') reads as bits, as bandwidths
    are written, so it is refused with a hint rather than guessed.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InputError(field, f"expected a volume such as 40TB or 500GiB, got {shown(value)}")
    if isinstance(value, int):
        return _bounded_volume(Decimal(value), value, field)
    match = _VOLUME_RE.fullmatch(value)
    unit = (match["unit"] or "") if match is not None else ""
    if match is None or unit.lower() not in _VOLUME_UNITS:
        raise InputError(field, f"cannot read {shown(value)} as a volume; {_VOLUME_HINT}")
    if unit.endswith("b"):
        prefix = unit[:-1]
        written = ("k" if prefix == "k" else prefix[:1].upper()) + prefix[1:] + "B"
        raise InputError(
            field, f"{shown(value)} reads as bits ('{unit}'); volumes are bytes: write {written}"
        )
    # The regex lets ASCII digits alone by, so Decimal reads them exactly.
    amount = Decimal(match["num"]) * _VOLUME_UNITS[unit.lower()]
    if amount != amount.to_integral_value():
        raise InputError(field, f"must be a whole number of bytes, got {shown(value)}")
    return _bounded_volume(amount, value, field)


def _bounded_volume(amount: Decimal, given: object, field: str) -> int:
    if amount <= 0:
        raise InputError(field, f"must be positive, got {shown(given)}")
    if amount > MAX_VOLUME:
        raise InputError(field, f"must be at most 1 EB (1000PB), got {shown(given)}")
    return int(amount)


def format_volume(count: int) -> str:
    """Bytes for a person: '40 TB', '1.5 GB', '512 B' (powers of 1000, as inputs mostly are)."""
    for unit, size in (
        ("EB", 10**18),
        ("PB", 10**15),
        ("TB", 10**12),
        ("GB", 10**9),
        ("MB", 10**6),
        ("kB", 10**3),
    ):
        if count >= size:
            return f"{count / size:.4g} {unit}"
    return f"{count} B"
