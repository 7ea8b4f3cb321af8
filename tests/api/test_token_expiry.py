"""Expired and revoked tokens get a 401 that says so, through REST."""

from __future__ import annotations

from braid.app.auth import create_token
from braid.app.tokens import revoke_tokens
from tests.api.harness import NOW, build


def test_an_expired_token_gets_401_saying_so() -> None:
    api = build()
    token = create_token(api.repo, "carol", "user", NOW, expires_in=60)
    headers = {"Authorization": f"Bearer {token}"}
    assert api.client.get("/v1/reservations", headers=headers).status_code == 200
    api.clock.advance(60)  # the service's clock decides, even for a cached token
    response = api.client.get("/v1/reservations", headers=headers)
    assert response.status_code == 401, response.text
    message = response.json()["error"]["message"]
    assert "expired at 2030-01-01T00:01:00Z" in message and "braid token create" in message


def test_a_revoked_token_gets_401_saying_so() -> None:
    api = build()
    revoke_tokens(api.repo, now=NOW, actor="olga", user="alice")
    response = api.client.get("/v1/reservations", headers=api.auth("alice"))
    assert response.status_code == 401, response.text
    assert "was revoked at 2030-01-01T00:00:00Z" in response.json()["error"]["message"]
    assert response.headers["www-authenticate"] == "Bearer"
    # Others' tokens still work.
    assert api.client.get("/v1/reservations", headers=api.auth("bob")).status_code == 200
