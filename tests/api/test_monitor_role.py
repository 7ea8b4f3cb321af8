"""A monitor's token may set link states and say who it is: every other route refuses it.

The routes come from the OpenAPI document, so a route added later is covered
(and refused to monitors) without this test naming it.
"""

from __future__ import annotations

import re
from typing import Any

from braid.app.auth import MONITOR_ROUTES, create_token
from tests.api.harness import NOW, Api, iso

# A value for each path parameter: real ones, so a route a monitor could use
# would get past a "not found" and show it.
PATH_VALUES = {"link": "DENV-SUNN", "token_id": "0123456789ab"}
# Query parameters that would make the reads valid (a refusal must come first).
QUERY = {"at": iso(0), "start": iso(0), "end": iso(3600)}


def _routes(api: Api) -> list[tuple[str, str, dict[str, Any]]]:
    document = api.client.get("/openapi.json").json()
    return [
        (method.upper(), path, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def _url(path: str, reservation: str) -> str:
    values = {**PATH_VALUES, "reservation_id": reservation}
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], "x"), path)


def test_a_monitor_is_refused_every_route_but_link_states_and_me(api: Api) -> None:
    token = create_token(api.repo, "mon", "monitor", NOW)
    headers = {"Authorization": f"Bearer {token}"}
    booked = api.client.post(
        "/v1/reservations",
        json={"src": "ORNL", "dst": "NERSC", "bandwidth": "1G", "start": iso(60), "end": iso(120)},
        headers=api.auth("alice"),
    ).json()["id"]
    routes = _routes(api)
    secured = [(m, p) for m, p, op in routes if op.get("security")]
    assert ("GET", "/v1/topology") in secured and len(secured) >= 20  # the document is read
    assert set(secured) >= MONITOR_ROUTES  # what a monitor may use still exists
    before = api.snapshot()
    allowed = []
    for method, path in secured:
        if (method, path) in MONITOR_ROUTES:
            continue
        body: dict[str, Any] | None = None if method in ("GET", "DELETE") else {}
        response = api.client.request(
            method, _url(path, booked), params=QUERY, json=body, headers=headers
        )
        if response.status_code != 403:
            allowed.append((method, path, response.status_code))
        else:
            assert "monitor" in response.json()["error"]["message"], (method, path)
    assert allowed == []
    assert api.snapshot() == before  # refusals change nothing
    me = api.client.get("/v1/me", headers=headers)
    assert me.status_code == 200 and me.json()["role"] == "monitor"
    down = api.client.post("/v1/links/DENV-SUNN/state", json={"state": "down"}, headers=headers)
    assert down.status_code == 200, down.text


def test_the_other_roles_keep_their_reads(api: Api) -> None:
    for who in ("alice", "olga"):
        for url in ("/v1/topology", "/v1/links", "/v1/maintenance", "/v1/topology/versions"):
            assert api.client.get(url, headers=api.auth(who)).status_code == 200, (who, url)
