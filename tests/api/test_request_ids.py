"""Every response names its request; the audit log says which request made each change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from braid.adapters.store import open_repository
from tests.api.harness import Api, body, build


def test_a_new_id_is_made_and_a_client_s_own_is_kept(api: Api) -> None:
    made = api.client.get("/healthz").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    assert api.client.get("/healthz").headers["x-request-id"] != made
    mine = api.client.get("/healthz", headers={"X-Request-ID": "job-42.step:7"})
    assert mine.headers["x-request-id"] == "job-42.step:7"
    odd = api.client.get("/healthz", headers={"X-Request-ID": "a b\tc" + "x" * 80})
    assert re.fullmatch(r"[0-9a-f]{32}", odd.headers["x-request-id"])


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_the_audit_log_names_the_request_of_each_change(store: str, tmp_path: Path) -> None:
    api = build(
        open_repository(f"sqlite:///{tmp_path / 'braid.db'}") if store == "sqlite" else None
    )
    booked = api.client.post(
        "/v1/reservations", json=body(), headers={**api.auth("alice"), "X-Request-ID": "book-1"}
    )
    rid = booked.json()["id"]
    cancelled = api.client.delete(
        f"/v1/reservations/{rid}", headers={**api.auth("alice"), "X-Request-ID": "cancel-1"}
    )
    assert cancelled.headers["x-request-id"] == "cancel-1"
    entries = api.client.get(f"/v1/reservations/{rid}/audit", headers=api.auth("alice")).json()
    requests = [e["detail"].get("request_id") for e in entries["entries"]]
    assert requests == ["book-1", "cancel-1"]
