"""Bearer tokens: random, shown once, stored only as a hash."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from typing import Final

from braid.app.errors import AuthError
from braid.app.ports import Repository
from braid.app.records import User

ROLES: Final = ("user", "operator")
TOKEN_PREFIX: Final = "brd_"
# How long a verified token is trusted without asking the store again.
TOKEN_CACHE_SECONDS: Final = 5.0
_CACHE_LIMIT: Final = 10_000


def hash_token(token: str) -> str:
    # Tokens carry 256 random bits, so a plain SHA-256 is enough: there is
    # nothing to brute-force that a slow hash would protect.
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def create_token(repo: Repository, name: str, role: str, now: int) -> str:
    """Create a user's token and return it; only its hash is kept."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    if not name or not name.isprintable():
        raise ValueError("user name must be a printable, non-empty string")
    token = new_token()
    repo.add_token(hash_token(token), User(name, role), now=now)
    return token


class TokenCache:
    """Tokens verified in the last `seconds`, so most requests skip the store.

    Only known tokens are kept: an unknown one is asked about every time.
    A role changed in the store applies within `seconds`.
    """

    def __init__(
        self,
        seconds: float = TOKEN_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._known: dict[str, tuple[User, float]] = {}

    def get(self, authorization: str | None) -> User | None:
        """The cached user behind a header, or None (then call `authenticate`)."""
        if not authorization:
            return None
        with self._lock:
            found = self._known.get(authorization)
        if found is None or found[1] <= self.clock():
            return None
        return found[0]

    def put(self, authorization: str, user: User) -> None:
        with self._lock:
            if len(self._known) >= _CACHE_LIMIT:
                self._known.clear()  # crude, but bounded; the store still answers
            self._known[authorization] = (user, self.clock() + self.seconds)


def authenticate(
    repo: Repository, authorization: str | None, cache: TokenCache | None = None
) -> User:
    """The user behind an `Authorization: Bearer …` header."""
    if cache is not None:
        cached = cache.get(authorization)
        if cached is not None:
            return cached
    if not authorization:
        raise AuthError("missing bearer token: send 'Authorization: Bearer <token>'")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("expected 'Authorization: Bearer <token>'")
    user = repo.user_for(hash_token(token.strip()))
    if user is None:
        raise AuthError("unknown or revoked token; ask an operator for one (braid token create)")
    if cache is not None:
        cache.put(authorization, user)
    return user
