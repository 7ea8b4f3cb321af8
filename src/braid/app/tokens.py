"""Managing tokens: list and revoke (creating one is `auth.create_token`).

The one way in for the CLI (and any other front end), so each refuses the
same ids with the same messages.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import replace

from braid.app.auth import TokenCache, authenticate
from braid.app.errors import ForbiddenError, NotFoundError
from braid.app.ports import Repository
from braid.app.records import TOKEN_ID_LENGTH, TokenInfo, User
from braid.core.errors import InputError
from braid.core.model.local_time import check_zone

# Shorter prefixes would too easily name several tokens by accident.
MIN_ID_LENGTH = 6


def list_tokens(repo: Repository, user: str | None = None) -> list[TokenInfo]:
    """Every token (of `user`), oldest first: ids, never the secrets."""
    return repo.tokens(user)


def revoke_tokens(
    repo: Repository, *, now: int, actor: str, token: str | None = None, user: str | None = None
) -> list[TokenInfo]:
    """Revoke one token by its id (or an unambiguous prefix of it), or all of `user`'s.

    With both, the token must be `user`'s. Revoking what is revoked already
    changes nothing and returns nothing; an id that names no token, or
    several, is refused.
    """
    if token is None and user is None:
        raise InputError("token", "name a token id, or a user whose tokens to revoke")
    prefix = ""
    if token is not None:
        prefix = _checked_id(token)
        _one_token(repo, prefix, user)
    elif not repo.tokens(user):
        raise NotFoundError(f"user {user!r} has no tokens")
    return repo.revoke_tokens(now=now, actor=actor, prefix=prefix, user=user)


def visible_tokens(repo: Repository, caller: User, user: str | None = None) -> list[TokenInfo]:
    """The tokens `caller` may see: their own, or (operators) anyone's."""
    if caller.role != "operator":
        if user not in (None, caller.name):
            raise ForbiddenError("only operators see other users' tokens")
        user = caller.name
    return list_tokens(repo, user)


def revoke_as(repo: Repository, caller: User, token: str, now: int) -> list[TokenInfo]:
    """Revoke one token by id: `caller`'s own, or (operators) anyone's."""
    owner = None if caller.role == "operator" else caller.name
    return revoke_tokens(repo, now=now, actor=caller.name, token=token, user=owner)


def _checked_id(token: str) -> str:
    prefix = token.strip().lower()
    hex_digits = set(string.hexdigits.lower())
    if not MIN_ID_LENGTH <= len(prefix) <= TOKEN_ID_LENGTH or not set(prefix) <= hex_digits:
        raise InputError(
            "token",
            f"expected a token id as `braid token list` shows it ({MIN_ID_LENGTH} to "
            f"{TOKEN_ID_LENGTH} hex digits), not {token!r}; the token itself is never needed",
        )
    return prefix


def _one_token(repo: Repository, prefix: str, user: str | None) -> TokenInfo:
    matching = [t for t in repo.tokens(user) if t.id.startswith(prefix)]
    if not matching:
        owner = "" if user is None else f" of user {user!r}"
        raise NotFoundError(f"no token{owner} has an id starting {prefix!r}")
    if len(matching) > 1:
        ids = ", ".join(t.id for t in matching)
        raise InputError("token", f"{prefix!r} names several tokens ({ids}); give more digits")
    return matching[0]


class BearerTokens:
    """Who a bearer token names, by one store and one clock, with a short-lived cache.

    The REST API and the orchestrator's gRPC service ask it for every call;
    revoking here forgets the cache at once, so a revoked token is refused on
    the next request.
    """

    def __init__(self, repo: Repository, clock: Callable[[], int]) -> None:
        self._repo = repo
        self._clock = clock
        self._cache = TokenCache(wall=clock)  # expiries by the service's own clock

    def cached(self, authorization: str | None) -> User | None:
        """The user behind a header verified moments ago, without asking the store."""
        return self._cache.get(authorization)

    def authenticate(self, authorization: str | None) -> User:
        """The user behind an `Authorization: Bearer …` header (this asks the store)."""
        return authenticate(self._repo, authorization, self._cache)

    def visible(self, caller: User, user: str | None = None) -> list[TokenInfo]:
        return visible_tokens(self._repo, caller, user)

    def revoke(self, caller: User, token: str) -> list[TokenInfo]:
        revoked = revoke_as(self._repo, caller, token, self._clock())
        self._cache.forget()
        return revoked

    def set_tz(self, caller: User, tz: object) -> User:
        """Set `caller`'s time zone setting (an IANA name, or None to clear it).

        The cache is forgotten, so this replica reads the next request in the
        new zone at once (others, like a role change, within the cache's seconds).
        """
        if tz is not None and not isinstance(tz, str):
            raise InputError("tz", f"expected an IANA zone name such as Europe/Paris, got {tz!r}")
        check_zone(tz, "tz")
        self._repo.set_user_tz(caller.name, tz)
        self._cache.forget()
        return replace(caller, tz=tz)
