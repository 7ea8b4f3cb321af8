"""`/v1/tokens`: users see and revoke their own tokens, operators anyone's; revoked at once."""

from __future__ import annotations

from tests.api.harness import Api


def _ids(api: Api, who: str, query: str = "") -> list[str]:
    response = api.client.get(f"/v1/tokens{query}", headers=api.auth(who))
    assert response.status_code == 200, response.text
    assert all(set(t) >= {"id", "user", "role", "created_at"} for t in response.json()["tokens"])
    return [t["id"] for t in response.json()["tokens"]]


def test_users_see_their_own_tokens_and_operators_everyone_s(api: Api) -> None:
    assert len(_ids(api, "alice")) == 1
    assert len(_ids(api, "olga")) == 3
    assert _ids(api, "olga", "?user=bob") == _ids(api, "bob")
    other = api.client.get("/v1/tokens?user=bob", headers=api.auth("alice"))
    assert other.status_code == 403
    text = api.client.get("/v1/tokens", headers=api.auth("olga")).text
    assert not any(secret in text for secret in api.tokens.values())


def test_a_revoked_token_is_refused_at_once(api: Api) -> None:
    (alice,) = _ids(api, "alice")
    assert api.client.get("/v1/reservations", headers=api.auth("alice")).status_code == 200
    revoked = api.client.delete(f"/v1/tokens/{alice}", headers=api.auth("alice"))
    assert revoked.status_code == 200 and revoked.json()["tokens"][0]["revoked_at"]
    assert api.client.get("/v1/reservations", headers=api.auth("alice")).status_code == 401


def test_a_user_cannot_revoke_another_s_token_but_an_operator_can(api: Api) -> None:
    (bob,) = _ids(api, "bob")
    assert api.client.delete(f"/v1/tokens/{bob}", headers=api.auth("alice")).status_code == 404
    assert api.client.get("/v1/reservations", headers=api.auth("bob")).status_code == 200
    assert api.client.delete(f"/v1/tokens/{bob[:8]}", headers=api.auth("olga")).status_code == 200
    assert api.client.get("/v1/reservations", headers=api.auth("bob")).status_code == 401


def test_a_bad_id_names_the_field(api: Api) -> None:
    response = api.client.delete("/v1/tokens/xyz", headers=api.auth("olga"))
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "token"
