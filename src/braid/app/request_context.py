"""The request a piece of work is done for, so logs and the audit log can name it.

The REST layer sets `REQUEST_ID` for each request (the client's
`X-Request-ID`, or a new one) and hands work to threads with the context
copied; services read it when they record what they did.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

__all__ = ["REQUEST_ID", "current_request", "request_detail"]

REQUEST_ID: Final[ContextVar[str | None]] = ContextVar("braid_request_id", default=None)


def current_request() -> str | None:
    return REQUEST_ID.get()


def request_detail() -> dict[str, str]:
    """`{"request_id": ...}` for an audit entry's detail, or nothing outside a request."""
    found = REQUEST_ID.get()
    return {} if found is None else {"request_id": found}
