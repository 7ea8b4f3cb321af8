"""How the API serves: blocking work off the event loop, /healthz's store check, the
bearer scheme in the document, and the request metrics seeing every status."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from braid.adapters.api.health import StoreCheck
from braid.app.reservations.memory_store import MemoryRepository
from tests.api.harness import Api, body, build, iso


def on_the_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@dataclass
class FakeMonotonic:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


class FlakyStore(MemoryRepository):
    """A store that counts topology-version reads and can stop answering them."""

    def __init__(self) -> None:
        super().__init__()
        self.version_reads = 0
        self.down = False

    def topology_version(self) -> int:
        self.version_reads += 1
        if self.down:
            raise OSError("the database went away")
        return super().topology_version()


SERVICE_CALLS = ("reserve", "find", "get", "cancel", "modify", "confirm", "audit", "availability")


def test_the_service_is_never_called_on_the_event_loop(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The service blocks on the store and on the group commit: called on the
    # loop, it would stall every other request.
    seen: list[tuple[str, bool]] = []

    def watched(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            seen.append((name, on_the_event_loop()))
            return call(*args, **kwargs)

        return run

    for name in SERVICE_CALLS:
        monkeypatch.setattr(api.service, name, watched(name, getattr(api.service, name)))
    monkeypatch.setattr(api.repo, "topology_version", watched("healthz", api.repo.topology_version))
    alice = api.auth("alice")
    held = api.client.post("/v1/reservations", json=body(hold=True), headers=alice).json()
    url = f"/v1/reservations/{held['id']}"
    assert api.client.post(url + "/confirm", headers=alice).status_code == 200
    assert api.client.patch(url, json={"end": iso(3 * 3600)}, headers=alice).status_code == 200
    for path in (url, url + "/audit", "/v1/reservations", "/healthz"):
        assert api.client.get(path, headers=alice).status_code == 200, path
    query = {"src": "ORNL", "dst": "NERSC", "bandwidth": "1G", "start": iso(0), "end": iso(60)}
    assert api.client.get("/v1/availability", params=query, headers=alice).status_code == 200
    assert api.client.delete(url, headers=alice).status_code == 200
    assert sorted({name for name, _ in seen}) == sorted((*SERVICE_CALLS, "healthz"))
    assert not [name for name, on_loop in seen if on_loop]


def test_healthz_asks_the_store_at_most_once_a_second_and_never_trusts_a_failure() -> None:
    store = FlakyStore()
    api = build(store)
    clock = FakeMonotonic()
    api.app.state.store_check = StoreCheck(clock=clock)
    for _ in range(3):
        assert api.client.get("/healthz").json() == {"status": "ok", "topology_version": 1}
    assert store.version_reads == 1
    store.down = True
    assert api.client.get("/healthz").status_code == 200  # the answer of less than 1 s ago
    clock.now += 1.0
    for reads in (2, 3):  # a failure is not remembered: each call asks again
        response = api.client.get("/healthz")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "unavailable"
        assert store.version_reads == reads
    store.down = False
    assert api.client.get("/healthz").status_code == 200


def test_healthz_shows_a_topology_put_here_at_once(api: Api) -> None:
    api.app.state.store_check = StoreCheck(clock=FakeMonotonic())  # the clock never moves
    assert api.client.get("/healthz").json()["topology_version"] == 1
    topology = api.client.get("/v1/topology", headers=api.auth("olga")).json()
    assert (
        api.client.put("/v1/topology", json=topology, headers=api.auth("olga")).status_code == 200
    )
    assert api.client.get("/healthz").json()["topology_version"] == 2


def test_the_document_declares_the_bearer_scheme_on_every_route_that_needs_a_token(
    api: Api,
) -> None:
    document = api.client.get("/openapi.json").json()
    scheme = document["components"]["securitySchemes"]["HTTPBearer"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            public = path == "/healthz"
            assert ("security" not in operation) == public, (method, path)
            if not public:
                assert operation["security"] == [{"HTTPBearer": []}], (method, path)
                assert "401" in operation["responses"], (method, path)
    reserve = document["paths"]["/v1/reservations"]["post"]
    assert reserve["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ReservationIn"
    }
    assert reserve["responses"]["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ReservationOut"
    }


def test_crashes_and_refused_bodies_are_counted_under_their_route(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(api.service, "get", broken)
    assert api.client.get("/v1/reservations/r-1", headers=api.auth("alice")).status_code == 500
    headers = {**api.auth("alice"), "content-type": "application/json"}
    huge = b'{"src": "ORNL"' + b" " * 100_000 + b"}"
    assert api.client.post("/v1/reservations", content=huge, headers=headers).status_code == 413
    assert api.client.get("/nowhere").status_code == 404
    text = api.client.get("/metrics", headers=api.auth("olga")).text
    counted = re.findall(r"^braid_http_requests_total\{(.*)\} 1\.0$", text, re.M)
    assert 'method="GET",route="/v1/reservations/{reservation_id}",status="500"' in counted
    assert 'method="POST",route="/v1/reservations",status="413"' in counted
    assert 'method="GET",route="unmatched",status="404"' in counted
