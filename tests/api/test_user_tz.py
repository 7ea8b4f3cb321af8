"""A user's `tz` setting: shown and set at /v1/me, and the zone their local times are read in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from braid.adapters.store import open_repository
from tests.api.harness import Api, body, build

# The harness's clock: 2030-01-01T00:00:00Z, a Tuesday (01:00 in Paris).


def me(api: Api, who: str = "alice") -> dict[str, Any]:
    found: dict[str, Any] = api.client.get("/v1/me", headers=api.auth(who)).json()
    return found


def set_tz(api: Api, tz: object, who: str = "alice") -> Any:
    return api.client.patch("/v1/me", json={"tz": tz}, headers=api.auth(who))


def reserve(api: Api, who: str = "alice", **fields: Any) -> Any:
    return api.client.post("/v1/reservations", json=body(**fields), headers=api.auth(who))


def test_the_setting_is_shown_set_and_cleared(api: Api) -> None:
    assert me(api)["tz"] is None
    answer = set_tz(api, "Europe/Paris")
    assert answer.status_code == 200
    assert answer.json() == {"name": "alice", "role": "user", "tz": "Europe/Paris"}
    assert me(api)["tz"] == "Europe/Paris"
    assert me(api, "bob")["tz"] is None  # one user's setting
    assert set_tz(api, None).json()["tz"] is None
    assert me(api)["tz"] is None


@pytest.mark.parametrize(
    ("tz", "says"),
    [
        ("Europe/Pariss", "did you mean Europe/Paris"),
        ("europe/paris", "did you mean Europe/Paris"),
        ("Mars/Olympus", "unknown time zone"),
        ("localtime", "not a time zone"),
        (5, "IANA zone name"),
    ],
)
def test_a_bad_zone_is_refused_naming_tz_and_changes_nothing(
    api: Api, tz: object, says: str
) -> None:
    set_tz(api, "America/Chicago")
    answer = set_tz(api, tz)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["field"] == "tz" and says in error["message"]
    assert me(api)["tz"] == "America/Chicago"


def test_an_unknown_setting_is_refused(api: Api) -> None:
    answer = api.client.patch("/v1/me", json={"zone": "Europe/Paris"}, headers=api.auth("alice"))
    assert answer.status_code == 422
    assert me(api)["tz"] is None


def test_a_local_time_without_zone_is_refused_until_the_user_sets_one(api: Api) -> None:
    before = api.snapshot()
    refused = reserve(api, start="2030-01-01 12:00", end="2030-01-01 13:00")
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["field"] == "start"
    assert "Europe/Paris" in error["message"] and "+01:00" in error["message"]
    assert api.snapshot() == before
    set_tz(api, "Europe/Paris")
    booked = reserve(api, start="2030-01-01 12:00", end="2030-01-01 13:00")
    assert booked.status_code == 201, booked.text
    # Responses stay in the stored form, UTC.
    assert (booked.json()["start"], booked.json()["end"]) == (
        "2030-01-01T11:00:00Z",
        "2030-01-01T12:00:00Z",
    )


def test_day_words_are_read_in_the_users_zone_at_the_services_now(api: Api) -> None:
    set_tz(api, "America/Chicago")
    booked = reserve(api, start="tomorrow 09:00", end="friday 17:00")
    assert booked.status_code == 201, booked.text
    # Chicago is at 2029-12-31 18:00 (Monday) when the service's clock says 2030-01-01Z.
    assert booked.json()["start"] == "2030-01-01T15:00:00Z"  # Tuesday 09:00 CST
    assert booked.json()["end"] == "2030-01-04T23:00:00Z"  # Friday 17:00 CST


def test_a_zone_in_the_request_wins_over_the_setting(api: Api) -> None:
    set_tz(api, "America/Chicago")
    booked = reserve(api, start="2030-01-02 09:00 Asia/Tokyo", end="2030-01-02T10:00:00Z")
    assert booked.status_code == 201, booked.text
    assert booked.json()["start"] == "2030-01-02T00:00:00Z"


def test_availability_and_modify_read_the_users_zone(api: Api) -> None:
    set_tz(api, "Europe/Paris")
    asked = api.client.get(
        "/v1/availability",
        params=body(start="2030-01-02 10:00", end="2030-01-02 11:00"),
        headers=api.auth("alice"),
    )
    assert asked.status_code == 200, asked.text
    assert asked.json()["start"] == "2030-01-02T09:00:00Z"
    booked = reserve(api).json()
    changed = api.client.patch(
        f"/v1/reservations/{booked['id']}",
        json={"end": "2030-01-01 04:00"},
        headers=api.auth("alice"),
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["end"] == "2030-01-01T03:00:00Z"


def test_a_new_setting_applies_to_the_next_request_at_once(api: Api) -> None:
    set_tz(api, "Europe/Paris")
    assert reserve(api, start="2030-01-02 10:00", end="2030-01-02 11:00").json()["start"] == (
        "2030-01-02T09:00:00Z"
    )
    set_tz(api, "Asia/Kolkata")
    assert reserve(api, start="2030-01-02 10:00", end="2030-01-02 11:00").json()["start"] == (
        "2030-01-02T04:30:00Z"
    )


@pytest.fixture
def sql_api(tmp_path: Path) -> Iterator[Api]:
    repo = open_repository(f"sqlite:///{tmp_path}/b.db")
    try:
        yield build(repo)
    finally:
        repo.close()


def test_the_sql_store_keeps_the_setting_and_a_new_token_leaves_it(sql_api: Api) -> None:
    from braid.app.auth import create_token

    assert set_tz(sql_api, "Europe/Paris").status_code == 200
    token = create_token(sql_api.repo, "alice", "user", sql_api.clock())
    sql_api.tokens["alice2"] = token
    assert me(sql_api, "alice2")["tz"] == "Europe/Paris"
    booked = reserve(sql_api, "alice2", start="2030-01-02 10:00", end="2030-01-02 11:00")
    assert booked.json()["start"] == "2030-01-02T09:00:00Z"


def test_a_new_token_for_the_user_keeps_their_setting_in_memory_too(api: Api) -> None:
    from braid.app.auth import create_token

    set_tz(api, "Europe/Paris")
    api.tokens["alice2"] = create_token(api.repo, "alice", "user", api.clock())
    assert me(api, "alice2")["tz"] == "Europe/Paris"
