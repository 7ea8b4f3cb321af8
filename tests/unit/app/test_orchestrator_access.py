"""Callers of the Orchestrator service as REST users: by token, by certificate, or open."""

from __future__ import annotations

import time

import pytest

from braid.app.auth import create_token
from braid.app.errors import AuthError, ForbiddenError
from braid.app.orchestrator_access import ANONYMOUS, Credentials, Identities
from braid.app.records import User
from braid.app.reservations.memory_store import MemoryRepository


def _bearer(token: str) -> Credentials:
    return Credentials((), f"Bearer {token}")


def test_a_token_names_the_user_it_was_made_for() -> None:
    repo = MemoryRepository()
    token = create_token(repo, "alice", "user", int(time.time()))
    assert Identities(repo).user(_bearer(token)) == User("alice", "user")


def test_a_token_decides_even_beside_a_certificate() -> None:
    repo = MemoryRepository()
    identities = Identities(repo, operators=["admin.example.net"])
    with pytest.raises(AuthError, match="unknown token"):
        identities.user(Credentials(("admin.example.net",), "Bearer brd_nope"))


def test_a_certificate_names_a_user_and_listed_names_are_operators() -> None:
    identities = Identities(operators=["ops.example.net"])
    assert identities.user(Credentials(("orch.example.net", "10.0.0.1"))) == User(
        "orch.example.net", "user"
    )
    assert identities.user(Credentials(("ops.example.net",))).role == "operator"


def test_a_monitor_may_not_use_the_orchestrator() -> None:
    repo = MemoryRepository()
    token = create_token(repo, "watcher", "monitor", int(time.time()))
    with pytest.raises(ForbiddenError, match="role monitor"):
        Identities(repo).user(_bearer(token))


def test_without_credentials_only_an_open_orchestrator_lets_a_caller_in() -> None:
    with pytest.raises(AuthError, match="no credentials"):
        Identities(MemoryRepository()).user(Credentials())
    assert Identities(open=True).user(Credentials()) == ANONYMOUS


def test_a_token_where_no_store_takes_tokens_is_refused() -> None:
    with pytest.raises(AuthError, match="takes no bearer tokens"):
        Identities().user(_bearer("brd_whatever"))
