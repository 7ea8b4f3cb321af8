"""`GET /v1/reservations/{id}/delivery` and `braid show --delivery` over fake switches.

A real service and the real app; the reservation's rules are installed in a
fake network by the provisioner, traffic is sent through it, and the
delivery sampler reads the fake switches' counters, as `braid serve` reads
real ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient
from rich.console import Console

from braid.adapters.api import create_app
from braid.app.auth import create_token
from braid.app.settings import Settings
from braid.cli.client import BraidClient
from braid.cli.delivery_views import delivery
from tests.unit.app.delivery.world import T0, World


def _client(world: World, *, sampled: bool = True) -> tuple[TestClient, dict[str, dict[str, str]]]:
    app = create_app(world.service, Settings(), delivery_history=world.history if sampled else None)
    tokens = {who: create_token(world.repo, who, "user", T0) for who in ("alice", "bob")}
    auth = {who: {"Authorization": f"Bearer {t}"} for who, t in tokens.items()}
    return TestClient(app), auth


def _get(client: TestClient, rid: str, headers: dict[str, str]) -> dict[str, Any]:
    answer = client.get(f"/v1/reservations/{rid}/delivery", headers=headers)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def test_a_reservation_that_gets_its_rate_then_loses_its_path() -> None:
    world = World()
    client, auth = _client(world)
    rid = world.book(mbps=8)
    first = _get(client, rid, auth["alice"])
    assert first == {
        "reservation": rid,
        "booked": 8,
        "status": "unmeasured",
        "interval_seconds": 5.0,
        "directions": [],
    }
    world.install()
    world.sampler.sample(world.clock.now)
    for _ in range(3):
        world.interval(1.0)
    found = _get(client, rid, auth["alice"])
    assert found["status"] == "ok"
    forward, reverse = found["directions"]
    assert (forward["from"], forward["to"], forward["status"]) == ("h1", "h2", "ok")
    assert reverse["status"] == "idle"
    assert len(forward["intervals"]) == 3
    assert all(i["delivered"] == 8 and i["booked_share"] == 1 for i in forward["intervals"])
    assert forward["totals"]["delivered_bytes"] == forward["totals"]["offered_bytes"] == 15_000_000
    record = world.repo.get(rid)
    assert record is not None
    for link in {k for a in record.allocations for k in a.path.links}:
        world.network.set_link(link, up=False)
    for _ in range(3):
        world.interval(1.5)
    found = _get(client, rid, auth["alice"])
    assert found["status"] == "degraded"
    last = found["directions"][0]["intervals"][-1]
    assert (last["offered"], last["delivered"], last["short"]) == (12, 0, True)
    assert [e.action for e in world.audit.entries] == ["delivery"]


def test_unknown_and_foreign_reservations_answer_as_the_reservation_does() -> None:
    world = World()
    client, auth = _client(world)
    assert client.get("/v1/reservations/r-nope/delivery", headers=auth["alice"]).status_code == 404
    rid = world.book()
    shown = client.get(f"/v1/reservations/{rid}", headers=auth["bob"]).status_code
    assert client.get(f"/v1/reservations/{rid}/delivery", headers=auth["bob"]).status_code == shown
    assert client.get(f"/v1/reservations/{rid}/delivery").status_code == 401


def test_without_sampling_every_reservation_is_unmeasured() -> None:
    world = World()
    client, auth = _client(world, sampled=False)
    rid = world.book()
    found = _get(client, rid, auth["alice"])
    assert (found["status"], found["interval_seconds"], found["directions"]) == (
        "unmeasured",
        None,
        [],
    )


def _measured(world: World) -> tuple[TestClient, dict[str, dict[str, str]], str]:
    """A booking of 8 Mbit/s installed and measured over one interval of 1 s."""
    client, auth = _client(world)
    rid = world.book(mbps=8)
    world.install()
    world.sampler.sample(world.clock.now)
    world.interval(1.0)
    return client, auth, rid


def test_braid_show_delivery_prints_the_intervals_and_the_status() -> None:
    world = World()
    client, auth, rid = _measured(world)
    world.interval(2.0)
    token = auth["alice"]["Authorization"].removeprefix("Bearer ")
    with BraidClient("http://testserver", token, transport=client._transport) as braid:
        view = braid.delivery(rid)
    console = Console(record=True, width=120)
    console.print(delivery(view))
    text = console.export_text()
    assert f"reservation {rid}: delivery ok against 8 Mbit/s booked" in text
    assert "h1 → h2: ok" in text
    assert "16.00" in text and "200.0" in text  # twice the booked rate offered, delivered
    assert "h2 → h1: idle" in text


def test_delivery_intervals_come_in_a_zone_on_request() -> None:
    client, auth, rid = _measured(World())
    answer = client.get(
        f"/v1/reservations/{rid}/delivery", params={"tz": "Asia/Tokyo"}, headers=auth["alice"]
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["local_tz"] == "Asia/Tokyo"
    interval = found["directions"][0]["intervals"][0]
    start = datetime.fromisoformat(interval["start"])
    assert datetime.fromisoformat(interval["start_local"]) == start
    assert interval["start_local"].endswith("+09:00")
