"""Bearer tokens: random, shown once, stored only as a hash."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from braid.app.errors import AuthError, ForbiddenError
from braid.app.ports import Repository
from braid.app.records import TokenInfo, User

ROLES: Final = ("user", "operator", "monitor")  # a monitor: link states and /metrics only
# Who may scrape /metrics (unless the server runs with metrics_open): the
# operators, and a monitor token, which is what a Prometheus server is given.
METRICS_ROLES: Final = ("operator", "monitor")
# Everything a monitor's token may ask of the REST API (method, route as the
# OpenAPI document writes it): say a link is up or down, which is all `braid
# monitor --action service` sends, who the token belongs to (to check it), and
# /metrics for Prometheus. Nothing else, reads included: the topology, links,
# usage and maintenance say more of the network and its bookings than that needs.
MONITOR_ROUTES: Final = frozenset(
    {("POST", "/v1/links/{link}/state"), ("GET", "/v1/me"), ("GET", "/metrics")}
)
TOKEN_PREFIX: Final = "brd_"
# How long a verified token is trusted without asking the store again.
TOKEN_CACHE_SECONDS: Final = 5.0
_CACHE_LIMIT: Final = 10_000


def check_route(user: User, method: str, route: str) -> None:
    """Refuse (ForbiddenError) a route `user`'s role may not use at all; the rest is the
    service's to decide (ownership, operators only)."""
    if user.role == "monitor" and (method, route) not in MONITOR_ROUTES:
        raise ForbiddenError(
            "a monitor's token may only set link states (POST /v1/links/{link}/state)"
        )


def hash_token(token: str) -> str:
    # Tokens carry 256 random bits, so a plain SHA-256 is enough: there is
    # nothing to brute-force that a slow hash would protect.
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def create_token(
    repo: Repository,
    name: str,
    role: str,
    now: int,
    *,
    expires_in: int | None = None,
    actor: str | None = None,
) -> str:
    """Create a user's token (expiring `expires_in` seconds from `now`, if given).

    Returns the token, to be shown this once: the store keeps only its hash.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    if not name or not name.isprintable():
        raise ValueError("user name must be a printable, non-empty string")
    if expires_in is not None and expires_in <= 0:
        raise ValueError("a token must live for at least a second")
    token = new_token()
    expires_at = None if expires_in is None else now + expires_in
    repo.add_token(hash_token(token), User(name, role), now=now, expires_at=expires_at, actor=actor)
    return token


class TokenCache:
    """Tokens verified in the last `seconds`, so most requests skip the store.

    Only known, valid tokens are kept: an unknown one is asked about every
    time. A role changed or a token revoked in the store applies within
    `seconds`; an expiry applies at once, by `wall` (the epoch clock that
    expiries are stated in; the service passes its own).
    """

    def __init__(
        self,
        seconds: float = TOKEN_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self.wall = wall
        self._lock = threading.Lock()
        # header -> (user, trusted until by `clock`, the token's expiry by `wall`)
        self._known: dict[str, tuple[User, float, int | None]] = {}

    def get(self, authorization: str | None) -> User | None:
        """The cached user behind a header, or None (then call `authenticate`)."""
        if not authorization:
            return None
        with self._lock:
            found = self._known.get(authorization)
        if found is None:
            return None
        user, trusted_until, expires_at = found
        if trusted_until <= self.clock():
            return None
        if expires_at is not None and expires_at <= self.wall():
            return None
        return user

    def forget(self) -> None:
        """Drop every cached token (after a revocation here: it applies at once)."""
        with self._lock:
            self._known.clear()

    def put(self, authorization: str, user: User, expires_at: int | None = None) -> None:
        with self._lock:
            if len(self._known) >= _CACHE_LIMIT:
                self._known.clear()  # crude, but bounded; the store still answers
            self._known[authorization] = (user, self.clock() + self.seconds, expires_at)


def require_metrics_reader(user: User) -> None:
    """Refuse a user whose role may not read /metrics (a plain user: it shows every link)."""
    if user.role not in METRICS_ROLES:
        raise ForbiddenError(
            f"the metrics are for {' and '.join(METRICS_ROLES)} tokens; "
            f"{user.name!r} has the role {user.role!r}"
        )


def authenticate(
    repo: Repository,
    authorization: str | None,
    cache: TokenCache | None = None,
    now: int | None = None,
) -> User:
    """The user behind an `Authorization: Bearer …` header at `now` (default: the cache's wall)."""
    if cache is not None:
        cached = cache.get(authorization)
        if cached is not None:
            return cached
    if not authorization:
        raise AuthError("missing bearer token: send 'Authorization: Bearer <token>'")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("expected 'Authorization: Bearer <token>'")
    info = repo.token(hash_token(token.strip()))
    if now is None:
        now = int((cache.wall if cache is not None else time.time)())
    refused = refusal(info, now)
    if refused or info is None:
        raise AuthError(refused or _UNKNOWN)
    user = User(info.user, info.role, info.tz)
    if cache is not None:
        cache.put(authorization, user, info.expires_at)
    return user


_UNKNOWN: Final = "unknown token; ask an operator for one (braid token create)"


def refusal(info: TokenInfo | None, now: int) -> str:
    """Why this token may not be used at `now` ('' when it may)."""
    if info is None:
        return _UNKNOWN
    again = "; ask an operator for a new one (braid token create)"
    if info.revoked_at is not None:
        return f"token {info.id} was revoked at {_iso(info.revoked_at)}{again}"
    if info.expires_at is not None and info.expires_at <= now:
        return f"token {info.id} expired at {_iso(info.expires_at)}{again}"
    return ""


def _iso(at: int) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")
