"""Idempotency keys: a client's retry of a POST gets the first answer, not a second booking.

A client sends `Idempotency-Key: K` with a POST that creates or changes a
reservation. The key (per owner) and a digest of the request's body are
stored with what the request wrote, in the same transaction (the new row's
columns for a booking, the audit entry for a confirm), so the retry finds
them on any replica and after any restart; the same key with another body
is refused. See docs/service.md, "Idempotency keys".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from braid.app.errors import IdempotencyError
from braid.core.errors import InputError

__all__ = ["HEADER", "MAX_KEY_LENGTH", "body_digest", "check_key", "same_request"]

HEADER: Final = "Idempotency-Key"
MAX_KEY_LENGTH: Final = 255


def check_key(key: str | None) -> str | None:
    """`key` if it is one a client may send (printable ASCII, 1 to 255 characters)."""
    if key is None:
        return None
    if not 0 < len(key) <= MAX_KEY_LENGTH or not (key.isascii() and key.isprintable()):
        raise InputError(
            HEADER, f"must be 1 to {MAX_KEY_LENGTH} printable ASCII characters (a UUID will do)"
        )
    return key


def body_digest(what: str, body: Mapping[str, Any]) -> str:
    """SHA-256 of the request (`what` it asks, and its body), however its keys are ordered."""
    text = json.dumps(
        {"request": what, "body": body}, sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def same_request(key: str, stored: str | None, digest: str) -> None:
    """Refuse (IdempotencyError) a key reused for another request."""
    if stored != digest:
        raise IdempotencyError(
            f"{HEADER} {key!r} was used for another request; "
            "send a new key for a new request (the first one's answer is kept for this key)"
        )
