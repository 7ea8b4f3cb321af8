"""`?tz=`: answers keep their UTC instants and add each one in the zone asked for."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest

from braid.adapters.api.local_fields import in_zone, local_prose
from braid.core.policy import Limits, Policy
from tests.api.harness import Api, body, build, iso

DAY = 86_400

# The harness's clock: 2030-01-01T00:00:00Z, 01:00 in Paris (CET, +01:00).


def reserve(api: Api, tz: str | None = None, who: str = "alice", **fields: Any) -> Any:
    params = {} if tz is None else {"tz": tz}
    return api.client.post(
        "/v1/reservations", json=body(**fields), params=params, headers=api.auth(who)
    )


def get(api: Api, path: str, who: str = "alice", **params: str) -> Any:
    return api.client.get(path, params=params, headers=api.auth(who))


def test_without_tz_an_answer_is_as_it_always_was(api: Api) -> None:
    booked = reserve(api).json()
    assert "start_local" not in booked and "local_tz" not in booked
    shown = get(api, f"/v1/reservations/{booked['id']}").json()
    assert shown == booked


def test_every_instant_gains_its_local_rendering_beside_the_utc_one(api: Api) -> None:
    booked = reserve(api, tz="Europe/Paris").json()
    assert booked["local_tz"] == "Europe/Paris"
    assert (booked["start"], booked["start_local"]) == (iso(3600), "2030-01-01T02:00:00+01:00")
    assert booked["end_local"] == "2030-01-01T03:00:00+01:00"
    assert booked["created_at_local"] == "2030-01-01T01:00:00+01:00"
    assert booked["hold_expires_at"] is None and "hold_expires_at_local" not in booked
    # The body as sent is echoed as sent.
    assert not any(key.endswith("_local") for key in booked["request"])
    rid = booked["id"]
    shown = get(api, f"/v1/reservations/{rid}", tz="Asia/Kolkata").json()
    assert shown["start_local"] == "2030-01-01T06:30:00+05:30"
    listed = get(api, "/v1/reservations", tz="Europe/Paris", state="reserved").json()
    assert listed["local_tz"] == "Europe/Paris"
    assert [r["start_local"] for r in listed["reservations"]] == ["2030-01-01T02:00:00+01:00"]
    audit = get(api, f"/v1/reservations/{rid}/audit", tz="Europe/Paris").json()
    assert audit["entries"][0]["at_local"] == "2030-01-01T01:00:00+01:00"


def test_the_offset_is_the_one_the_zone_has_at_each_instant() -> None:
    winter, summer = "2030-01-15T18:00:00Z", "2030-07-15T18:00:00Z"
    shown = in_zone({"start": winter, "end": summer}, "America/Chicago")
    assert shown["start_local"] == "2030-01-15T12:00:00-06:00"  # CST
    assert shown["end_local"] == "2030-07-15T13:00:00-05:00"  # CDT


def test_lists_of_instants_keep_their_shape(api: Api) -> None:
    query = {
        "mode": "all-slots", "src": "ORNL", "dst": "NERSC", "bandwidth": "20G",
        "duration": "3600", "window_start": iso(0), "window_end": iso(7200),
    }  # fmt: skip
    answer = get(api, "/v1/availability", tz="Europe/Paris", **query).json()
    assert answer["slots"] == [[iso(0), iso(3601)]]
    assert answer["slots_local"] == [["2030-01-01T01:00:00+01:00", "2030-01-01T02:00:01+01:00"]]
    assert answer["free_local"] == [["2030-01-01T01:00:00+01:00", "2030-01-01T03:00:00+01:00"]]


def test_tz_me_is_the_callers_own_setting(api: Api) -> None:
    api.client.patch("/v1/me", json={"tz": "America/Chicago"}, headers=api.auth("alice"))
    booked = reserve(api, tz="me").json()
    assert booked["local_tz"] == "America/Chicago"
    assert booked["start_local"] == "2029-12-31T19:00:00-06:00"
    # The setting alone changes no answer: it is applied when asked for.
    assert "start_local" not in get(api, f"/v1/reservations/{booked['id']}").json()


def test_tz_me_without_a_setting_is_refused_naming_tz_and_books_nothing(api: Api) -> None:
    before = api.snapshot()
    refused = reserve(api, tz="me")
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["field"] == "tz" and "PATCH /v1/me" in error["message"]
    assert api.snapshot() == before


@pytest.mark.parametrize(
    ("tz", "says"),
    [
        ("Europe/Pariss", "did you mean Europe/Paris?"),
        ("europe/paris", "did you mean Europe/Paris?"),
        ("", "is not a time zone"),
        ("localtime", "is not a time zone"),
    ],
)
def test_an_unknown_zone_is_refused_naming_tz_and_changes_nothing(
    api: Api, tz: str, says: str
) -> None:
    before = api.snapshot()
    refused = reserve(api, tz=tz)
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["field"] == "tz" and says in error["message"], error
    assert api.snapshot() == before


def test_tz_given_twice_is_refused(api: Api) -> None:
    answer = api.client.get("/v1/reservations?tz=Europe/Paris&tz=UTC", headers=api.auth("alice"))
    assert answer.status_code == 422 and answer.json()["error"]["field"] == "tz"


def test_a_refusal_says_its_instants_in_the_zone_and_its_offers_stay_postable(api: Api) -> None:
    reserve(api, bandwidth="30G")
    refused = reserve(api, tz="Europe/Paris", bandwidth="45G")
    assert refused.status_code == 409
    error = refused.json()["error"]
    message = error["message"]
    assert "2030-01-01 02:00:00 CET (+01:00)" in message and "T02:00:00Z" not in message
    offers = {a["kind"]: a["body"] for a in error["alternatives"]}
    assert offers["earliest_start"]["start"] == iso(7200)
    assert "start_local" not in offers["earliest_start"]
    accepted = api.client.post(
        "/v1/reservations", json=offers["earliest_start"], headers=api.auth("alice")
    )
    assert accepted.status_code == 201, accepted.text


def test_an_earliest_refusal_says_its_duration_in_words(api: Api) -> None:
    query = {
        "mode": "earliest", "src": "ORNL", "dst": "NERSC", "bandwidth": "500G",
        "duration": "5400", "not_before": iso(3600), "not_after": iso(36000),
    }  # fmt: skip
    answer = get(api, "/v1/availability", tz="Asia/Tokyo", **query).json()
    assert answer["status"] == "rejected", answer
    assert "for 1 hour 30 minutes " in answer["reason"]
    assert "2030-01-01 10:00:00 JST (+09:00)" in answer["reason"]


def test_prose_without_instants_is_left_alone() -> None:
    assert local_prose("no path from ORNL to NERSC", ZoneInfo("Europe/Paris")) == (
        "no path from ORNL to NERSC"
    )


def test_a_volume_refusal_says_its_window_and_completion_in_the_zone(api: Api) -> None:
    sent = {
        "mode": "volume", "src": "ORNL", "dst": "NERSC", "volume": "1TB",
        "not_before": iso(3600), "deadline": iso(3640),
    }  # fmt: skip
    refused = api.client.post(
        "/v1/reservations", json=sent, params={"tz": "Europe/Paris"}, headers=api.auth("alice")
    )
    assert refused.status_code == 409, refused.text
    message = refused.json()["error"]["message"]
    # From 02:00:00 to 02:00:40 in Paris; all of it by 02:01:29.
    for said in ("02:00:00 CET (+01:00)", "02:00:40 CET (+01:00)", "02:01:29 CET (+01:00)"):
        assert f"2030-01-01 {said}" in message, message


def test_a_policy_refusal_says_its_instants_in_the_zone() -> None:
    api = build(policy=Policy(roles={"user": Limits(horizon=DAY)}))
    far = body(start=iso(2 * DAY), end=iso(2 * DAY + 3600))
    refused = reserve(api, tz="America/Chicago", **far)
    assert refused.status_code == 403, refused.text
    message = refused.json()["error"]["message"]
    assert "the end 2030-01-02 19:00:00 CST (-06:00)" in message, message
    assert "within 1 day of now, by 2030-01-01 18:00:00 CST (-06:00)" in message, message


def test_an_instant_past_the_zones_calendar_stays_in_utc() -> None:
    last, first = "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"
    assert in_zone({"end": last}, "Asia/Tokyo")["end_local"] == last
    assert in_zone({"start": first}, "America/Chicago")["start_local"] == first
    assert local_prose(f"free until {last}", ZoneInfo("Asia/Tokyo")) == f"free until {last}"
