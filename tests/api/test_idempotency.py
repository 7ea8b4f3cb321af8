"""`Idempotency-Key` on the POSTs that book or change: a retry gets the first answer."""

from __future__ import annotations

from typing import Any

from braid.app.ports import Filters
from tests.api.harness import Api, body, iso


def _post(api: Api, who: str, key: str | None, sent: dict[str, Any], url: str = "") -> Any:
    headers = {**api.auth(who), **({"Idempotency-Key": key} if key is not None else {})}
    return api.client.post(url or "/v1/reservations", json=sent, headers=headers)


def _created(api: Api) -> list[str]:
    return [e.reservation_id or "" for e in api.repo.audit() if e.action == "created"]


def test_a_retry_with_the_same_key_gets_the_first_reservation_not_a_second(api: Api) -> None:
    first = _post(api, "alice", "retry-1", body(bandwidth="20G"))
    assert first.status_code == 201, first.text
    assert "idempotent-replayed" not in first.headers
    before = api.snapshot()
    again = _post(api, "alice", "retry-1", body(bandwidth="20G"))
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["paths"] == first.json()["paths"]
    assert api.snapshot() == before  # nothing booked, nothing logged
    assert _created(api) == [first.json()["id"]]


def test_the_same_key_with_another_body_is_refused_naming_the_header(api: Api) -> None:
    _post(api, "alice", "retry-2", body(bandwidth="20G"))
    before = api.snapshot()
    other = _post(api, "alice", "retry-2", body(bandwidth="10G"))
    assert other.status_code == 409, other.text
    error = other.json()["error"]
    assert (error["code"], error["field"]) == ("idempotency_key_reused", "Idempotency-Key")
    assert api.snapshot() == before


def test_keys_are_per_user_and_bad_keys_name_the_header(api: Api) -> None:
    mine = _post(api, "alice", "shared", body(bandwidth="1G")).json()["id"]
    theirs = _post(api, "bob", "shared", body(bandwidth="1G"))
    assert theirs.status_code == 201 and theirs.json()["id"] != mine
    before = api.snapshot()
    for bad in ("", "x" * 256, "a\tb"):
        refused = _post(api, "alice", bad, body(bandwidth="1G"))
        assert refused.status_code == 422, (bad, refused.text)
        assert refused.json()["error"]["field"] == "Idempotency-Key"
    assert api.snapshot() == before


def test_a_refused_request_leaves_its_key_free(api: Api) -> None:
    before = api.snapshot()
    assert _post(api, "alice", "big", body(bandwidth="1T")).status_code == 409
    assert api.snapshot() == before
    assert _post(api, "alice", "big", body(bandwidth="1G")).status_code == 201


def test_without_a_key_a_repeat_books_again(api: Api) -> None:
    ids = {_post(api, "alice", None, body(bandwidth="1G")).json()["id"] for _ in range(2)}
    assert len(ids) == 2


def test_a_confirm_sent_again_with_its_key_gets_the_reservation(api: Api) -> None:
    held = _post(api, "alice", None, body(hold=True)).json()
    url = f"/v1/reservations/{held['id']}/confirm"
    first = _post(api, "alice", "confirm-1", {}, url)
    assert first.status_code == 200 and first.json()["state"] == "reserved"
    before = api.snapshot()
    again = _post(api, "alice", "confirm-1", {}, url)
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["version"] == first.json()["version"]
    assert api.snapshot() == before
    assert _post(api, "alice", None, {}, url).status_code == 422  # no key: a refused transition


def test_maintenance_sent_again_with_its_key_books_one_window(api: Api) -> None:
    window = {"link": "DENV-SUNN", "start": iso(3600), "end": iso(5400), "reason": "fibre"}
    first = _post(api, "olga", "mnt-1", window, "/v1/maintenance")
    assert first.status_code == 201, first.text
    before = api.snapshot()
    again = _post(api, "olga", "mnt-1", window, "/v1/maintenance")
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["maintenance"]["id"] == first.json()["maintenance"]["id"]
    assert api.snapshot() == before
    moved = _post(api, "olga", "mnt-1", {**window, "reason": "power"}, "/v1/maintenance")
    assert moved.status_code == 409 and moved.json()["error"]["field"] == "Idempotency-Key"
    kinds = [r.kind for r in api.repo.find(Filters())]
    assert kinds.count("maintenance") == 1
