"""What the store keeps: reservations, their link loads, users, topology versions, audit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from braid.core.model.booking import Allocation
from braid.core.model.loads import LinkLoad
from braid.core.planning.lifecycle import State

__all__ = [
    "AuditEntry",
    "LinkLoad",
    "Reservation",
    "TokenInfo",
    "TopologyVersion",
    "User",
    "token_entry",
    "token_id",
]


@dataclass(frozen=True, slots=True)
class Reservation:
    """A reservation as stored; `version` rises with every change (optimistic locking)."""

    id: str
    token: str  # opaque; identifies the reservation to domains (seed 000 §4.2)
    owner: str
    state: State
    src: str
    dst: str
    start: int
    end: int
    allocations: tuple[Allocation, ...]
    symmetric: bool = True
    kind: str = "booking"  # or "maintenance"
    request: Mapping[str, Any] = field(default_factory=dict)  # as asked, for audit and modify
    plan: Mapping[str, Any] = field(default_factory=dict)  # split, weights, mdi, streams, vlans
    hold_expires_at: int | None = None
    created_at: int = 0
    updated_at: int = 0
    version: int = 1
    # The client's Idempotency-Key for the request that created it (unique per
    # owner), and a digest of that request's body: a retry with the key gets
    # this reservation back, the same key with another body is refused.
    idempotency_key: str | None = None
    request_digest: str | None = None

    @property
    def bandwidth(self) -> int:
        return sum(a.bandwidth for a in self.allocations)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: int
    actor: str
    reservation_id: str | None
    action: str  # created, state, modified, topology, maintenance, token, token-revoked
    from_state: str | None = None
    to_state: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class User:
    name: str
    role: str  # "user" or "operator"
    # The IANA zone the user reads and writes local times in (their `tz` setting);
    # None: none set, so a local time must name its zone or carry an offset.
    tz: str | None = None


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """What the store knows of a token: never the secret, only who and when."""

    id: str  # the start of the token's hash: enough to name it, useless to log in with
    user: str
    role: str  # the user's role now (roles belong to users, not tokens)
    created_at: int
    expires_at: int | None = None
    revoked_at: int | None = None
    tz: str | None = None  # the user's time zone setting now, as `role`


@dataclass(frozen=True, slots=True)
class TopologyVersion:
    version: int
    data: Mapping[str, Any]  # braid's own topology format, normalised
    created_at: int
    actor: str


# Hex digits of a token's hash that name it in listings and the audit log:
# 48 bits, so two tokens of one store practically never share an id, and the
# id says nothing useful about the token itself.
TOKEN_ID_LENGTH = 12


def token_id(token_hash: str) -> str:
    return token_hash[:TOKEN_ID_LENGTH]


def token_entry(action: str, token: TokenInfo, now: int, actor: str) -> AuditEntry:
    """The audit entry of a token created or revoked (by `actor`)."""
    detail: dict[str, Any] = {"token": token.id, "user": token.user, "role": token.role}
    if token.expires_at is not None:
        detail["expires_at"] = token.expires_at
    return AuditEntry(now, actor, None, action, detail=detail)
