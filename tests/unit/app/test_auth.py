"""Tokens: expiry and revocation refuse with a reason; the cache honours both in time."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from braid.app.auth import TOKEN_CACHE_SECONDS, TokenCache, authenticate, create_token, hash_token
from braid.app.errors import AuthError, NotFoundError
from braid.app.records import User
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.tokens import list_tokens, revoke_tokens
from braid.core.errors import InputError

NOW = 1_900_000_000


@dataclass
class Clocks:
    """The cache's monotonic clock and the wall clock, moved together."""

    mono: float = 100.0
    wall_now: int = NOW

    def monotonic(self) -> float:
        return self.mono

    def wall(self) -> float:
        return self.wall_now

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.wall_now += int(seconds)


def bearer(token: str) -> str:
    return f"Bearer {token}"


def make() -> tuple[MemoryRepository, Clocks, TokenCache]:
    clocks = Clocks()
    return MemoryRepository(), clocks, TokenCache(clock=clocks.monotonic, wall=clocks.wall)


def test_a_revoked_token_is_refused_within_the_cache_ttl() -> None:
    repo, clocks, cache = make()
    token = create_token(repo, "alice", "user", NOW)
    assert authenticate(repo, bearer(token), cache) == User("alice", "user")
    revoke_tokens(repo, now=NOW + 1, actor="olga", user="alice")
    # Trusted from the cache for at most TOKEN_CACHE_SECONDS after it was verified...
    clocks.advance(TOKEN_CACHE_SECONDS - 1)
    assert authenticate(repo, bearer(token), cache) == User("alice", "user")
    # ...and refused, saying why, from then on.
    clocks.advance(1)
    with pytest.raises(AuthError, match=r"was revoked at .*braid token create"):
        authenticate(repo, bearer(token), cache)
    clocks.advance(60)
    with pytest.raises(AuthError, match="was revoked"):
        authenticate(repo, bearer(token), cache)


def test_an_expired_token_is_refused_at_once_even_when_cached() -> None:
    repo, clocks, cache = make()
    token = create_token(repo, "alice", "user", NOW, expires_in=3)
    assert authenticate(repo, bearer(token), cache).name == "alice"
    clocks.advance(2)
    assert authenticate(repo, bearer(token), cache).name == "alice"
    clocks.advance(1)  # 3 s after creation: expired, though still within the cache's TTL
    with pytest.raises(AuthError, match=r"expired at 2030-03-17T17:46:43Z; ask an operator"):
        authenticate(repo, bearer(token), cache)


def test_unknown_tokens_say_so() -> None:
    repo, _, cache = make()
    with pytest.raises(AuthError, match="unknown token"):
        authenticate(repo, bearer("brd_nothing"), cache)


def test_tokens_are_listed_by_id_never_by_secret() -> None:
    repo, _, _ = make()
    token = create_token(repo, "alice", "user", NOW, expires_in=90 * 86400, actor="olga")
    create_token(repo, "bob", "operator", NOW + 1)
    listed = list_tokens(repo)
    assert [(t.id, t.user, t.role) for t in listed] == [
        (hash_token(token)[:12], "alice", "user"),
        (listed[1].id, "bob", "operator"),
    ]
    assert listed[0].expires_at == NOW + 90 * 86400
    assert [t.user for t in list_tokens(repo, "bob")] == ["bob"]
    assert token not in repr(listed)


def test_revoking_by_id_prefix_and_its_refusals() -> None:
    repo, _, _ = make()
    token = create_token(repo, "alice", "user", NOW)
    token_id = hash_token(token)[:12]
    with pytest.raises(InputError, match="hex digits"):
        revoke_tokens(repo, now=NOW, actor="olga", token=token)  # the secret is not an id
    with pytest.raises(InputError, match="name a token id, or a user"):
        revoke_tokens(repo, now=NOW, actor="olga")
    with pytest.raises(NotFoundError, match="no token"):
        revoke_tokens(repo, now=NOW, actor="olga", token="000000")
    with pytest.raises(NotFoundError, match="no token of user 'bob'"):
        revoke_tokens(repo, now=NOW, actor="olga", token=token_id, user="bob")
    with pytest.raises(NotFoundError, match="has no tokens"):
        revoke_tokens(repo, now=NOW, actor="olga", user="bob")
    revoked = revoke_tokens(repo, now=NOW, actor="olga", token=token_id[:6].upper())
    assert [t.id for t in revoked] == [token_id]
    assert revoke_tokens(repo, now=NOW, actor="olga", token=token_id) == []  # already


def test_an_ambiguous_prefix_is_refused() -> None:
    repo, _, _ = make()
    for digit in "12":
        repo.add_token("abcdef0123" + digit * 54, User("alice", "user"), now=NOW)
    with pytest.raises(InputError, match=r"several tokens \(abcdef012311, abcdef012322\)"):
        revoke_tokens(repo, now=NOW, actor="olga", token="abcdef01")
    assert [t.id for t in revoke_tokens(repo, now=NOW, actor="olga", token="abcdef01232")] == [
        "abcdef012322"
    ]


def test_a_token_must_live_a_while() -> None:
    repo, _, _ = make()
    with pytest.raises(ValueError, match="at least a second"):
        create_token(repo, "alice", "user", NOW, expires_in=0)
