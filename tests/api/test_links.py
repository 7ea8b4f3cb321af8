"""`/v1/links` (levels at an instant), `/v1/links/{id}/usage` (over time) and `/v1/me`."""

from __future__ import annotations

from typing import Any

from tests.api.harness import Api, body, iso

LINK = "DENV-SUNN"  # on the short ORNL -> NERSC route the example books first


def book(api: Api, **fields: Any) -> dict[str, Any]:
    response = api.client.post("/v1/reservations", json=body(**fields), headers=api.auth("alice"))
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def test_levels_at_an_instant_sum_everyone_s_bookings(api: Api) -> None:
    booked = book(api, bandwidth="5G")
    assert LINK in {link for p in booked["paths"] for link in p["links"]}
    during = api.client.get("/v1/links", params={"at": iso(3700)}, headers=api.auth("bob"))
    assert during.status_code == 200, during.text
    levels = {entry["id"]: entry for entry in during.json()["links"]}
    assert len(levels) == 18 and during.json()["at"] == iso(3700)
    assert levels[LINK] == {
        "id": LINK,
        "a": "DENV",
        "b": "SUNN",
        "capacity": 50000,
        "booked": {"a-b": 5000, "b-a": 5000},
    }
    before = api.client.get("/v1/links", headers=api.auth("bob")).json()
    assert before["at"] == iso(0)
    assert all(e["booked"] == {"a-b": 0, "b-a": 0} for e in before["links"])


def test_usage_is_the_step_function_with_maintenance_marked(api: Api) -> None:
    book(api, bandwidth="5G")
    window = {"link": LINK, "start": iso(10 * 3600), "end": iso(12 * 3600), "reason": "fibre"}
    assert api.client.post("/v1/maintenance", json=window, headers=api.auth("olga")).is_success
    response = api.client.get(
        f"/v1/links/{LINK}/usage",
        params={"start": iso(0), "end": iso(86400)},
        headers=api.auth("alice"),
    )
    assert response.status_code == 200, response.text
    usage = response.json()
    assert usage["capacity"] == 50000 and (usage["start"], usage["end"]) == (iso(0), iso(86400))
    expected = [
        [iso(0), iso(3600), 0],
        [iso(3600), iso(7200), 5000],
        [iso(7200), iso(36000), 0],
        [iso(36000), iso(43200), 50000],
        [iso(43200), iso(86400), 0],
    ]
    assert usage["steps"] == {"a-b": expected, "b-a": expected}
    [marked] = usage["maintenance"]
    assert (marked["start"], marked["end"], marked["reason"]) == (iso(36000), iso(43200), "fibre")


def test_usage_names_what_is_wrong(api: Api) -> None:
    ask = api.client.get
    for params, field in (
        ({"start": iso(0), "end": iso(0)}, "end"),
        ({"start": iso(0), "end": iso(400 * 86400)}, "end"),
        ({"start": "tomorrow", "end": iso(10)}, "start"),
    ):
        response = ask(f"/v1/links/{LINK}/usage", params=params, headers=api.auth("alice"))
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == field
    unknown = ask(
        "/v1/links/DENV-SUNX/usage",
        params={"start": iso(0), "end": iso(60)},
        headers=api.auth("alice"),
    )
    assert unknown.status_code == 422 and "DENV-SUNN" in unknown.json()["error"]["message"]


def test_links_and_me_need_a_token(api: Api) -> None:
    for path in ("/v1/links", f"/v1/links/{LINK}/usage?start={iso(0)}&end={iso(60)}", "/v1/me"):
        assert api.client.get(path).status_code == 401
        bad = api.client.get(path, headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 401


def test_me_names_the_caller_and_role(api: Api) -> None:
    assert api.client.get("/v1/me", headers=api.auth("alice")).json() == {
        "name": "alice",
        "role": "user",
        "tz": None,
    }
    assert api.client.get("/v1/me", headers=api.auth("olga")).json()["role"] == "operator"
