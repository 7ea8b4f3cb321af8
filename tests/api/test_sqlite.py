"""The same API over the SQL store (SQLite file): booking, rejection, lifecycle, restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from braid.adapters.store import SqlRepository, open_repository
from braid.app.reservations import operations
from braid.app.reservations.service import ReservationService
from tests.api.harness import HOLD_SECONDS, Api, body, build


@pytest.fixture
def sql_api(tmp_path: Path) -> Iterator[Api]:
    repo = open_repository(f"sqlite:///{tmp_path}/b.db")
    try:
        yield build(repo)
    finally:
        repo.close()


def test_book_reject_modify_cancel_over_sqlite(sql_api: Api) -> None:
    api, who = sql_api, sql_api.auth("alice")
    first = api.client.post("/v1/reservations", json=body(bandwidth="40G"), headers=who)
    second = api.client.post("/v1/reservations", json=body(bandwidth="40G"), headers=who)
    assert (first.status_code, second.status_code) == (201, 201)
    before = api.snapshot()
    full = api.client.post("/v1/reservations", json=body(bandwidth="40G"), headers=who)
    assert full.status_code == 409 and full.json()["error"]["alternatives"]
    url = f"/v1/reservations/{first.json()['id']}"
    too_big = api.client.patch(url, json={"bandwidth": "60G"}, headers=who)
    assert too_big.status_code == 409
    assert api.snapshot() == before
    assert api.client.patch(url, json={"bandwidth": "30G"}, headers=who).json()["version"] == 2
    assert api.client.delete(url, headers=who).json()["state"] == "cancelled"
    again = api.client.post("/v1/reservations", json=body(bandwidth="40G"), headers=who)
    assert again.status_code == 201, again.text
    audit = api.client.get(url + "/audit", headers=who).json()["entries"]
    assert [e["action"] for e in audit] == ["created", "modified", "state"]


def test_holds_expire_and_a_new_service_sees_what_the_store_holds(sql_api: Api) -> None:
    api, who = sql_api, sql_api.auth("alice")
    kept = api.client.post("/v1/reservations", json=body(bandwidth="40G"), headers=who).json()
    held = api.client.post("/v1/reservations", json=body(bandwidth="40G", hold=True), headers=who)
    assert held.json()["state"] == "held"
    api.clock.advance(HOLD_SECONDS)
    assert operations.tick(api.service.books) == 1
    # A second service on the same store, as after a restart: the booking still counts.
    assert isinstance(api.repo, SqlRepository)
    restarted = ReservationService(api.repo, clock=api.clock)
    restarted.start()
    network = restarted.books.mirror.network
    assert set(network.bookings) == {kept["id"]}
