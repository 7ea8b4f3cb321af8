"""Listing in pages: page sizes and opaque cursors.

Pages follow (start, id) order; a cursor names the last row of a page, so
the next page starts right after it whatever was written meanwhile.
"""

from __future__ import annotations

import base64
import json
from typing import Final

from braid.app.records import Reservation
from braid.core.errors import InputError

MAX_PAGE: Final = 1000


def page_limit(value: object) -> int:
    """`limit` of a listing: 1 to MAX_PAGE rows (default MAX_PAGE)."""
    if value in (None, ""):
        return MAX_PAGE
    try:
        limit = int(str(value))
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_PAGE:
        raise InputError("limit", f"must be a whole number from 1 to {MAX_PAGE}, not {value!r}")
    return limit


def encode_cursor(last: Reservation) -> str:
    """An opaque cursor naming the last row of a page: its (start, id)."""
    raw = json.dumps([last.start, last.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: object) -> tuple[int, str]:
    text = str(value)
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        start, last_id = json.loads(raw)
    except (ValueError, TypeError, RecursionError) as exc:
        raise InputError("after", "not a cursor from a previous page's 'next'") from exc
    # Only what `encode_cursor` makes gets through: nothing a store could choke on.
    fits = type(start) is int and abs(start) < 2**62
    if not fits or not isinstance(last_id, str) or not last_id.isprintable():
        raise InputError("after", "not a cursor from a previous page's 'next'")
    return start, last_id
