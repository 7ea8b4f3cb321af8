"""Booking through the REST API: the happy paths, alternatives, lifecycle and audit."""

from __future__ import annotations

from typing import Any

from braid.app.reservations import operations
from tests.api.harness import HOLD_SECONDS, Api, body, iso


def reserve(api: Api, who: str = "alice", **fields: Any) -> dict[str, Any]:
    response = api.client.post("/v1/reservations", json=body(**fields), headers=api.auth(who))
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def test_reserve_returns_the_booking_with_paths_shares_vlans_and_streams(api: Api) -> None:
    view = reserve(api, bandwidth="60G", max_paths=4)
    assert view["state"] == "reserved" and view["owner"] == "alice"
    assert (view["start"], view["end"], view["bandwidth"]) == (iso(3600), iso(7200), 60000)
    assert len(view["paths"]) >= 2  # no single path carries 60G here
    for path in view["paths"]:
        assert path["nodes"][0] == "ORNL" and path["nodes"][-1] == "NERSC"
        assert len(path["links"]) == len(path["nodes"]) - 1
    assert sum(p["bandwidth"] for p in view["paths"]) == 60000
    assert abs(sum(view["weights"]) - 1) < 1e-6
    assert [v["path"] for v in view["vlans"]] == list(range(len(view["paths"])))
    assert view["recommended_streams"] >= len(view["paths"])
    assert (
        api.client.get(f"/v1/reservations/{view['id']}", headers=api.auth("alice")).json() == view
    )


def test_rejection_offers_ready_to_post_alternatives_and_one_can_be_accepted(api: Api) -> None:
    reserve(api, bandwidth="30G")
    response = api.client.post(
        "/v1/reservations", json=body(bandwidth="45G"), headers=api.auth("alice")
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "rejected" and "45 Gbit/s" in error["message"]
    offers = {a["kind"]: a["body"] for a in error["alternatives"]}
    assert set(offers) == {"earliest_start", "max_bandwidth", "split"}
    assert offers["earliest_start"]["start"] == iso(7200)  # once the 30G booking ends
    assert offers["max_bandwidth"]["bandwidth"] == 40000
    for kind in ("earliest_start", "max_bandwidth"):
        accepted = api.client.post("/v1/reservations", json=offers[kind], headers=api.auth("alice"))
        assert accepted.status_code == 201, accepted.text
    assert accepted.json()["bandwidth"] == 40000


def test_bandwidth_above_every_link_is_rejected_with_the_highest_feasible(api: Api) -> None:
    response = api.client.post(
        "/v1/reservations", json=body(bandwidth="500G"), headers=api.auth("alice")
    )
    assert response.status_code == 409
    offers = {a["kind"]: a["body"] for a in response.json()["error"]["alternatives"]}
    assert offers["max_bandwidth"]["bandwidth"] == 50000  # the northern route's 50G backbone


def test_list_filters_by_state_owner_and_time(api: Api) -> None:
    first = reserve(api)
    held = reserve(api, hold=True, start=iso(10 * 3600), end=iso(11 * 3600))
    bobs = reserve(api, who="bob")

    def ids(who: str, query: str = "") -> list[str]:
        response = api.client.get(f"/v1/reservations{query}", headers=api.auth(who))
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["reservations"]]

    assert ids("alice") == [first["id"], held["id"]]
    assert ids("alice", "?state=held") == [held["id"]]
    assert ids("alice", "?state=held,reserved") == [first["id"], held["id"]]
    assert ids("alice", "?owner=bob") == []  # users see only their own
    assert ids("olga", "?owner=bob") == [bobs["id"]]
    assert set(ids("olga")) == {first["id"], held["id"], bobs["id"]}
    window = f"?start={iso(9 * 3600)}&end={iso(12 * 3600)}".replace("+", "%2B")
    assert ids("alice", window) == [held["id"]]


def test_modify_extends_the_end_and_changes_the_bandwidth(api: Api) -> None:
    view = reserve(api)
    url = f"/v1/reservations/{view['id']}"
    longer = api.client.patch(url, json={"end": iso(3 * 3600)}, headers=api.auth("alice"))
    assert longer.status_code == 200, longer.text
    assert (longer.json()["end"], longer.json()["version"]) == (iso(3 * 3600), view["version"] + 1)
    wider = api.client.patch(url, json={"bandwidth": "20G"}, headers=api.auth("alice"))
    assert wider.status_code == 200, wider.text
    assert wider.json()["bandwidth"] == 20000 and wider.json()["end"] == iso(3 * 3600)


def test_a_modify_that_does_not_fit_leaves_the_reservation_as_it_was(api: Api) -> None:
    view = reserve(api, bandwidth="40G")
    reserve(api, who="bob", bandwidth="40G")  # takes the other route
    before = api.snapshot()
    url = f"/v1/reservations/{view['id']}"
    response = api.client.patch(url, json={"bandwidth": "60G"}, headers=api.auth("alice"))
    assert response.status_code == 409
    assert api.snapshot() == before
    now = api.client.get(url, headers=api.auth("alice")).json()
    assert (now["version"], now["paths"], now["bandwidth"]) == (
        view["version"],
        view["paths"],
        40000,
    )


def test_cancel_frees_the_capacity_for_an_identical_request(api: Api) -> None:
    views = [reserve(api, bandwidth="40G") for _ in range(2)]  # both routes full
    again = api.client.post(
        "/v1/reservations", json=body(bandwidth="40G"), headers=api.auth("alice")
    )
    assert again.status_code == 409
    cancelled = api.client.delete(f"/v1/reservations/{views[0]['id']}", headers=api.auth("alice"))
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    reserve(api, bandwidth="40G")


def test_a_hold_is_confirmed_into_a_reservation(api: Api) -> None:
    held = reserve(api, hold=True)
    assert held["state"] == "held" and held["hold_expires_at"] == iso(HOLD_SECONDS)
    url = f"/v1/reservations/{held['id']}/confirm"
    confirmed = api.client.post(url, headers=api.auth("alice"))
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["state"] == "reserved"


def test_an_expired_hold_frees_its_capacity(api: Api) -> None:
    held = [reserve(api, bandwidth="40G", hold=True) for _ in range(2)]
    full = api.client.post("/v1/reservations", json=body(bandwidth="40G"), headers=api.auth("bob"))
    assert full.status_code == 409
    api.clock.advance(HOLD_SECONDS + 1)
    assert operations.tick(api.service.books) == 2
    url = f"/v1/reservations/{held[0]['id']}"
    assert api.client.get(url, headers=api.auth("alice")).json()["state"] == "expired"
    reserve(api, who="bob", bandwidth="40G")
    late = api.client.post(url + "/confirm", headers=api.auth("alice"))
    assert late.status_code == 422 and late.json()["error"]["field"] == "state"


def test_the_audit_log_records_each_transition_with_actor_and_time(api: Api) -> None:
    held = reserve(api, hold=True)
    url = f"/v1/reservations/{held['id']}"
    api.clock.advance(60)
    api.client.post(url + "/confirm", headers=api.auth("alice"))
    api.clock.advance(60)
    api.client.delete(url, headers=api.auth("olga"))
    entries = api.client.get(url + "/audit", headers=api.auth("alice")).json()["entries"]
    steps = [(e["actor"], e["from"], e["to"], e["at"]) for e in entries]
    assert steps == [
        ("alice", None, "held", iso(0)),
        ("alice", "held", "reserved", iso(60)),
        ("olga", "reserved", "cancelled", iso(120)),
    ]
    assert all(e["reservation"] == held["id"] for e in entries)


def test_availability_answers_without_booking(api: Api) -> None:
    before = api.snapshot()
    query = {
        "mode": "earliest", "src": "ORNL", "dst": "NERSC", "bandwidth": "30G",
        "duration": "3600", "not_before": iso(3600), "max_paths": "2", "directional": "true",
    }  # fmt: skip
    response = api.client.get("/v1/availability", params=query, headers=api.auth("bob"))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["start"], answer["end"], answer["bandwidth"]) == (iso(3600), iso(7200), 30000)
    assert api.snapshot() == before


def test_all_slots_of_a_window_that_began_a_moment_ago_start_now(api: Api) -> None:
    # A client's "now" reaches the server a little late; its slots count from now.
    query = {
        "mode": "all-slots", "src": "ORNL", "dst": "NERSC", "bandwidth": "20G",
        "duration": "3600", "window_start": iso(-2), "window_end": iso(86_400),
    }  # fmt: skip
    response = api.client.get("/v1/availability", params=query, headers=api.auth("bob"))
    assert response.status_code == 200, response.text
    slots = response.json()["slots"]
    assert slots and slots[0][0] == iso(0), slots
    # A booking's start in the past is still refused, naming the field.
    refused = api.client.post(
        "/v1/reservations", json=body(start=iso(-2), end=iso(3600)), headers=api.auth("bob")
    )
    assert refused.status_code == 422 and "start" in refused.text, refused.text


def test_all_slots_say_free_time_to_the_end_of_a_booking_at_the_last_start(api: Api) -> None:
    # Every path busy in [2h, 3h): an hour-long 10G booking can start from now until
    # 1h (inclusive), so the first free slot ends at 2h, where the busy time begins.
    busy = body(bandwidth="90G", max_paths=4, start=iso(7200), end=iso(10800))
    assert (
        api.client.post("/v1/reservations", json=busy, headers=api.auth("alice")).status_code == 201
    )
    query = {
        "mode": "all-slots", "src": "ORNL", "dst": "NERSC", "bandwidth": "10G",
        "duration": "3600", "window_start": iso(0), "window_end": iso(18000),
    }  # fmt: skip
    response = api.client.get("/v1/availability", params=query, headers=api.auth("bob"))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["slots"] == [[iso(0), iso(3601)], [iso(10800), iso(14401)]]  # starts [a, b)
    assert answer["free"] == [[iso(0), iso(7200)], [iso(10800), iso(18000)]]


def test_all_slots_over_several_paths_open_starts_one_path_lacks(api: Api) -> None:
    # No single route carries 60G (the same ask books over several paths above).
    query = {
        "mode": "all-slots", "src": "ORNL", "dst": "NERSC", "bandwidth": "60G",
        "duration": "3600", "window_start": iso(0), "window_end": iso(18000),
    }  # fmt: skip
    alone = api.client.get("/v1/availability", params=query, headers=api.auth("bob"))
    assert alone.status_code == 200, alone.text
    assert alone.json()["slots"] == []
    split = api.client.get(
        "/v1/availability", params={**query, "max_paths": "4"}, headers=api.auth("bob")
    )
    assert split.status_code == 200, split.text
    assert split.json()["slots"] == [[iso(0), iso(14401)]]
    bad = api.client.get(
        "/v1/availability", params={**query, "max_paths": "0"}, headers=api.auth("bob")
    )
    assert bad.status_code == 422 and "max_paths" in bad.text, bad.text


def test_listing_comes_in_pages_that_a_client_follows_to_the_end(api: Api) -> None:
    made = [
        reserve(api, bandwidth="1G", start=iso(3600 + n), end=iso(7200))["id"] for n in range(7)
    ]
    seen: list[str] = []
    params: dict[str, str] = {"limit": "3"}
    pages = 0
    while True:
        response = api.client.get("/v1/reservations", params=params, headers=api.auth("alice"))
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["reservations"]) <= 3
        seen += [r["id"] for r in page["reservations"]]
        pages += 1
        if page["next"] is None:
            break
        params["after"] = page["next"]
    assert seen == made  # by start time, none missed, none twice
    assert pages == 3
    whole = api.client.get("/v1/reservations", headers=api.auth("alice")).json()
    assert [r["id"] for r in whole["reservations"]] == made and whole["next"] is None


def test_a_bad_page_size_or_cursor_is_refused_naming_it(api: Api) -> None:
    bad = [({"limit": "0"}, "limit"), ({"limit": "1001"}, "limit"), ({"limit": "x"}, "limit")]
    bad.append(({"after": "not-a-cursor"}, "after"))
    for params, field in bad:
        response = api.client.get("/v1/reservations", params=params, headers=api.auth("alice"))
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == field


def test_paging_is_in_the_openapi_document(api: Api) -> None:
    document = api.client.get("/openapi.json").json()
    names = {p["name"] for p in document["paths"]["/v1/reservations"]["get"]["parameters"]}
    assert {"limit", "after"} <= names
    listing = document["components"]["schemas"]["ReservationList"]["properties"]
    assert "next" in listing
