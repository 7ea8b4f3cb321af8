"""Bearer tokens: random, shown once, stored only as a hash."""

from __future__ import annotations

import hashlib
import secrets
from typing import Final

from braid.app.errors import AuthError
from braid.app.ports import Repository
from braid.app.records import User

ROLES: Final = ("user", "operator")
TOKEN_PREFIX: Final = "brd_"


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


def authenticate(repo: Repository, authorization: str | None) -> User:
    """The user behind an `Authorization: Bearer …` header."""
    if not authorization:
        raise AuthError("missing bearer token: send 'Authorization: Bearer <token>'")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("expected 'Authorization: Bearer <token>'")
    user = repo.user_for(hash_token(token.strip()))
    if user is None:
        raise AuthError("unknown or revoked token; ask an operator for one (braid token create)")
    return user
