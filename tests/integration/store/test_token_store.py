"""Tokens in the store: expiry kept, revocation audited; memory, SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

from braid.app.auth import hash_token
from braid.app.records import User


def add(repo: Any, secret: str, user: str, now: int, **kw: Any) -> str:
    token_hash = hash_token(secret)
    repo.add_token(token_hash, User(user, "user"), now=now, **kw)
    return token_hash


def test_tokens_are_listed_oldest_first_with_their_expiry(repo: Any) -> None:
    a = add(repo, "a", "alice", 10, expires_at=100)
    b = add(repo, "b", "bob", 5)
    c = add(repo, "c", "alice", 20)
    listed = repo.tokens()
    assert [t.id for t in listed] == [b[:12], a[:12], c[:12]]
    assert [t.expires_at for t in listed] == [None, 100, None]
    assert [t.id for t in repo.tokens("alice")] == [a[:12], c[:12]]
    assert repo.tokens("nobody") == []


def test_revoking_one_token_by_its_id_leaves_the_others(repo: Any) -> None:
    a = add(repo, "a", "alice", 1)
    b = add(repo, "b", "alice", 2)
    revoked = repo.revoke_tokens(now=7, actor="olga", prefix=a[:8])
    assert [(t.id, t.revoked_at) for t in revoked] == [(a[:12], 7)]
    assert repo.token(a).revoked_at == 7
    assert repo.token(b).revoked_at is None
    # Revoking again changes nothing, and keeps the first instant.
    assert repo.revoke_tokens(now=9, actor="olga", prefix=a[:8]) == []
    assert repo.token(a).revoked_at == 7


def test_revoking_a_users_tokens_takes_all_of_theirs_only(repo: Any) -> None:
    a1, a2, b = add(repo, "a1", "alice", 1), add(repo, "a2", "alice", 2), add(repo, "b", "bob", 3)
    revoked = repo.revoke_tokens(now=8, actor="olga", user="alice")
    assert sorted(t.id for t in revoked) == sorted([a1[:12], a2[:12]])
    assert repo.token(b).revoked_at is None
    # A prefix of someone else's token with `user` revokes nothing.
    assert repo.revoke_tokens(now=9, actor="olga", prefix=b[:8], user="alice") == []


def test_create_and_revoke_are_audited_without_the_hash(repo: Any) -> None:
    a = add(repo, "a", "alice", 1, expires_at=50, actor="olga")
    repo.revoke_tokens(now=2, actor="olga", prefix=a[:12])
    entries = [e for e in repo.audit() if e.action.startswith("token")]
    assert [(e.action, e.actor, e.at) for e in entries] == [
        ("token", "olga", 1),
        ("token-revoked", "olga", 2),
    ]
    assert entries[0].detail == {
        "token": a[:12],
        "user": "alice",
        "role": "user",
        "expires_at": 50,
    }
    assert all(a not in str(e.detail) for e in entries)


def test_a_prefix_is_not_a_pattern(repo: Any) -> None:
    add(repo, "a", "alice", 1)
    assert repo.revoke_tokens(now=2, actor="olga", prefix="%") == []
    assert repo.revoke_tokens(now=2, actor="olga", prefix="_") == []
