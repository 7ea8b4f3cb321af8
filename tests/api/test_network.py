"""Operators change the network: topology versions, maintenance; and the health endpoints."""

from __future__ import annotations

import re
from typing import Any

from tests.api.harness import Api, body, iso

NORTH = "DENV-SUNN"  # on the short ORNL -> NERSC route


def reserve(api: Api, **fields: Any) -> dict[str, Any]:
    response = api.client.post("/v1/reservations", json=body(**fields), headers=api.auth("alice"))
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def links_of(view: dict[str, Any]) -> set[str]:
    return {link for path in view["paths"] for link in path["links"]}


def test_anyone_reads_the_topology_and_operators_replace_it(api: Api) -> None:
    topology = api.client.get("/v1/topology", headers=api.auth("alice")).json()
    assert topology["version"] == 1 and len(topology["links"]) == 18
    topology["links"].append({"id": "ORNL-NERSC", "a": "ORNL", "b": "NERSC", "capacity": 10000})
    response = api.client.put("/v1/topology", json=topology, headers=api.auth("olga"))
    assert response.status_code == 200, response.text
    assert response.json() == {"version": 2, "failed": []}
    assert api.client.get("/healthz").json() == {"status": "ok", "topology_version": 2}
    direct = reserve(api, bandwidth="5G")
    assert direct["paths"][0]["links"] == ["ORNL-NERSC"]


def test_a_topology_that_strands_bookings_is_refused_unless_forced(api: Api) -> None:
    booked = reserve(api, bandwidth="40G")
    assert NORTH in links_of(booked)
    topology = api.client.get("/v1/topology", headers=api.auth("olga")).json()
    for link in topology["links"]:
        if link["id"] == NORTH:
            link["capacity"] = 20000
    before = api.snapshot()
    refused = api.client.put("/v1/topology", json=topology, headers=api.auth("olga"))
    assert refused.status_code == 409, refused.text
    conflicts = refused.json()["error"]["conflicts"]
    assert [c["id"] for c in conflicts] == [booked["id"]] and NORTH in conflicts[0]["why"]
    assert api.snapshot() == before
    forced = api.client.put("/v1/topology?force=true", json=topology, headers=api.auth("olga"))
    assert forced.status_code == 200, forced.text
    assert [f["id"] for f in forced.json()["failed"]] == [booked["id"]]
    now = api.client.get(f"/v1/reservations/{booked['id']}", headers=api.auth("alice")).json()
    assert now["state"] == "failed"


def test_a_bad_topology_names_the_field(api: Api) -> None:
    before = api.snapshot()
    bad = {"nodes": [{"id": "A"}], "links": [{"id": "L", "a": "A", "b": "Z", "capacity": "1G"}]}
    response = api.client.put("/v1/topology", json=bad, headers=api.auth("olga"))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"].startswith("links")
    assert api.snapshot() == before


def test_maintenance_reroutes_what_it_can_and_fails_what_it_cannot(api: Api) -> None:
    movable = reserve(api, bandwidth="30G")
    assert NORTH in links_of(movable)
    window = {"link": NORTH, "start": iso(0), "end": iso(4 * 3600), "reason": "fibre work"}
    response = api.client.post("/v1/maintenance", json=window, headers=api.auth("olga"))
    assert response.status_code == 201, response.text
    result = response.json()
    assert [r["id"] for r in result["rerouted"]] == [movable["id"]] and result["failed"] == []
    assert result["maintenance"]["kind"] == "maintenance"
    moved = api.client.get(f"/v1/reservations/{movable['id']}", headers=api.auth("alice")).json()
    assert NORTH not in links_of(moved) and moved["state"] == "reserved"

    stuck = reserve(api, bandwidth="40G", start=iso(5 * 3600), end=iso(6 * 3600))
    reserve(api, bandwidth="40G", start=iso(5 * 3600), end=iso(6 * 3600))  # the other route
    later = {"node": "DENV", "start": iso(5 * 3600), "end": iso(6 * 3600)}
    response = api.client.post("/v1/maintenance", json=later, headers=api.auth("olga"))
    assert response.status_code == 201, response.text
    assert [f["id"] for f in response.json()["failed"]] == [stuck["id"]]
    gone = api.client.get(f"/v1/reservations/{stuck['id']}", headers=api.auth("alice")).json()
    assert gone["state"] == "failed"


def test_maintenance_needs_a_known_link_or_node(api: Api) -> None:
    before = api.snapshot()
    for sent, field in (
        ({"link": "NOPE", "start": iso(0), "end": iso(60)}, "link"),
        ({"start": iso(0), "end": iso(60)}, "link"),
        ({"node": "NOPE", "start": iso(0), "end": iso(60)}, "node"),
        ({"link": NORTH, "start": iso(60), "end": iso(0)}, "end"),
        ({"link": NORTH, "start": iso(0), "end": iso(60), "why": "typo"}, "why"),
    ):
        response = api.client.post("/v1/maintenance", json=sent, headers=api.auth("olga"))
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == field
    assert api.snapshot() == before


def test_healthz_needs_no_token(api: Api) -> None:
    response = api.client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "topology_version": 1}


def test_metrics_count_admissions_rejections_decisions_utilisation_and_requests(api: Api) -> None:
    reserve(api, bandwidth="25G")
    api.client.post("/v1/reservations", json=body(bandwidth="1T"), headers=api.auth("alice"))
    api.clock.advance(3600)  # into the booked window
    text = api.client.get("/metrics", headers=api.auth("olga")).text
    assert re.search(r"^braid_admissions_total 1\.0$", text, re.M)
    assert re.search(r'^braid_rejections_total\{reason="\w+"\} 1\.0$', text, re.M)
    assert re.search(r"^braid_decision_seconds_count 2\.0$", text, re.M)
    assert re.search(
        r'^braid_link_utilisation\{direction="a-b",link="DENV-SUNN"\} 0\.5$', text, re.M
    )
    route = r'method="POST",route="/v1/reservations",status="(\d+)"'
    assert sorted(re.findall(r"^braid_http_requests_total\{" + route, text, re.M)) == ["201", "409"]


def test_metrics_show_the_coming_hour_the_live_reservations_holds_and_replica_lag(
    api: Api,
) -> None:
    reserve(api, bandwidth="25G", start=iso(1800), end=iso(5400))  # starts within the hour
    held = body(bandwidth="10G", start=iso(7200), end=iso(9000), hold=True)
    answer = api.client.post("/v1/reservations", json=held, headers=api.auth("bob"))
    assert answer.status_code == 201
    text = api.client.get("/metrics", headers=api.auth("olga")).text
    assert re.search(
        r'^braid_link_utilisation\{direction="a-b",link="DENV-SUNN"\} 0\.0$', text, re.M
    )
    assert re.search(
        r'^braid_link_peak_next_hour\{direction="a-b",link="DENV-SUNN"\} 0\.5$', text, re.M
    )
    assert re.search(r'^braid_reservations\{state="reserved"\} 1\.0$', text, re.M)
    assert re.search(r'^braid_reservations\{state="held"\} 1\.0$', text, re.M)
    assert re.search(r"^braid_holds 1\.0$", text, re.M)
    assert re.search(r"^braid_hold_next_expiry_seconds 600\.0$", text, re.M)
    assert re.search(r"^braid_replica_changes_behind 0\.0$", text, re.M)
    assert re.search(r"^braid_replica_seconds_since_read \d", text, re.M)
    assert re.search(r'^braid_store_seconds_count\{operation="write"\} 2\.0$', text, re.M)
    assert re.search(r'^braid_store_seconds_count\{operation="read"\} [1-9]', text, re.M)


def test_maintenance_of_a_link_that_is_not_a_string_is_bad_input(api: Api) -> None:
    sent = {"link": ["CHIC-KANS"], "start": iso(0), "end": iso(60)}
    response = api.client.post("/v1/maintenance", json=sent, headers=api.auth("olga"))
    assert response.status_code == 422 and response.json()["error"]["field"] == "link"
