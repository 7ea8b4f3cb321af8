"""Errors the service raises; the REST and CLI front ends map each to one status."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from braid.core.errors import BraidError


class NotFoundError(BraidError):
    """No such thing, or one the caller may not see (we reveal nothing either way)."""


class ForbiddenError(BraidError):
    """The caller is known but lacks the role for this action."""


class PolicyError(ForbiddenError):
    """The booking breaks a rule of the booking policy; `rule` names it."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"policy rule {rule}: {message}")
        self.rule = rule


class AuthError(BraidError):
    """No valid bearer token."""


class RejectedError(BraidError):
    """The request is valid but cannot be granted; `alternatives` can be accepted as they are."""

    def __init__(
        self,
        reason: str,
        alternatives: Sequence[Mapping[str, Any]] = (),
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.alternatives = list(alternatives)
        self.detail = dict(detail or {})


class IdempotencyError(BraidError):
    """An Idempotency-Key sent again with a different request: refused, nothing changes."""
