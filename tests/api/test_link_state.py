"""`protect: true` bookings and `POST /v1/links/{id}/state` over REST."""

from __future__ import annotations

from typing import Any

from braid.app.auth import create_token
from tests.api.harness import NOW, Api, body


def protected(api: Api) -> dict[str, Any]:
    sent = body(bandwidth="5G", protect=True)
    response = api.client.post("/v1/reservations", json=sent, headers=api.auth("alice"))
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def monitor(api: Api) -> dict[str, str]:
    api.tokens["mon"] = create_token(api.repo, "mon", "monitor", NOW)
    return api.auth("mon")


def test_a_protected_reservation_fails_over_and_back(api: Api) -> None:
    r = protected(api)
    protection = r["protection"]
    primary, standby = protection["primary"]["links"], protection["standby"]["links"]
    # NERSC hangs off SUNN by one link: the standby shares it, and says so.
    assert protection["on"] == "primary" and protection["shared_links"] == ["NERSC-SUNN"]
    assert set(primary) & set(standby) == {"NERSC-SUNN"}
    assert r["paths"][0]["links"] == primary
    link = next(k for k in primary if k not in standby)
    down = api.client.post(f"/v1/links/{link}/state", json={"state": "down"}, headers=monitor(api))
    assert down.status_code == 200, down.text
    assert down.json()["changed"] is True
    assert down.json()["moved"] == [
        {"id": r["id"], "action": "failover", "why": f"link {link} down: onto the standby"}
    ]
    now = api.client.get(f"/v1/reservations/{r['id']}", headers=api.auth("alice")).json()
    assert now["protection"]["on"] == "standby" and now["paths"][0]["links"] == standby
    assert now["vlans"] == [{"path": 0, "vlan": now["protection"]["standby"]["vlan"]}]
    topology = api.client.get("/v1/topology", headers=api.auth("alice")).json()
    assert [k["id"] for k in topology["links"] if k.get("state") == "down"] == [link]
    up = api.client.post(f"/v1/links/{link}/state", json={"state": "up"}, headers=api.auth("olga"))
    assert [m["action"] for m in up.json()["moved"]] == ["failback"]
    audit = api.client.get(f"/v1/reservations/{r['id']}/audit", headers=api.auth("alice")).json()
    entries = audit["entries"] if isinstance(audit, dict) else audit
    assert [e["action"] for e in entries] == ["created", "failover", "failback"]
    assert entries[1]["detail"]["link"] == link


def test_bad_link_state_requests_name_the_field_and_change_nothing(api: Api) -> None:
    before = api.snapshot()
    olga = api.auth("olga")
    bad_link = api.client.post("/v1/links/NOPE/state", json={"state": "down"}, headers=olga)
    assert bad_link.status_code == 422 and bad_link.json()["error"]["field"] == "link"
    bad_state = api.client.post("/v1/links/DENV-SUNN/state", json={"state": "dn"}, headers=olga)
    assert bad_state.status_code == 422 and bad_state.json()["error"]["field"] == "state"
    missing = api.client.post("/v1/links/DENV-SUNN/state", json={}, headers=olga)
    assert missing.status_code == 422 and missing.json()["error"]["field"] == "state"
    typo = api.client.post("/v1/links/DENV-SUNN/state", json={"stat": "up"}, headers=olga)
    assert typo.status_code == 422
    user = api.client.post(
        "/v1/links/DENV-SUNN/state", json={"state": "down"}, headers=api.auth("alice")
    )
    assert user.status_code == 403
    bad_protect = api.client.post(
        "/v1/reservations", json=body(protect="yes"), headers=api.auth("alice")
    )
    assert bad_protect.status_code == 422
    assert bad_protect.json()["error"]["field"] == "protect"
    assert api.snapshot() == before


def test_a_monitor_token_cannot_book(api: Api) -> None:
    response = api.client.post("/v1/reservations", json=body(), headers=monitor(api))
    assert response.status_code == 403
