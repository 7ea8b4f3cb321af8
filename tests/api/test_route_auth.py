"""Every REST route of the OpenAPI document, called by everyone who should be refused:
no token, a wrong one, a revoked one, an expired one, another user's (on what is owned),
a role the route is not for. Zero successes, and not one of them changes anything.

Who may use each route is docs/service.md's table: a user's routes take any user's
token; an owner's (a reservation, a token) only the owner's or an operator's; the
operator's only an operator's; link states an operator's or a monitor's; /metrics an
operator's or a monitor's (docs/service.md#metrics). The monitor column covers the
routes whose docs already keep a monitor out (an operator's, another's reservation or
token); which other routes a monitor may read is being narrowed elsewhere, so those
are not asserted here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from braid.app.auth import create_token
from braid.app.tokens import revoke_tokens
from tests.api.harness import NOW, Api, build, iso

PUBLIC = {("GET", "/healthz")}  # liveness, for load balancers: no token by design
OPERATOR = {("PUT", "/v1/topology"), ("POST", "/v1/maintenance")}
OPERATOR_OR_MONITOR = {("POST", "/v1/links/{link}/state"), ("GET", "/metrics")}
# Routes that name something of alice's (path), or ask for it (query).
OWNED = {
    "/v1/reservations/{reservation_id}",
    "/v1/reservations/{reservation_id}/confirm",
    "/v1/reservations/{reservation_id}/audit",
    "/v1/tokens/{token_id}",
    "/v1/interdomain/reservations/{reservation_id}",
}
UNAUTHENTICATED = ("no token", "wrong token", "not bearer", "revoked", "expired")
UNCONFIGURED = "/v1/interdomain/"  # 503 without --domains, after the token is checked


@dataclass(frozen=True)
class Route:
    method: str
    path: str

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class World:
    api: Api
    reservation: str  # alice's
    alice_token: str  # the id of alice's token
    callers: dict[str, dict[str, str]]


def _routes() -> list[Route]:
    document = build().client.get("/openapi.json").json()
    return [
        Route(method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
        if (method.upper(), path) not in PUBLIC
    ]


ROUTES = _routes()


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    api = build()
    booked = api.client.post("/v1/reservations", json=_booking(), headers=api.auth("alice"))
    assert booked.status_code == 201, booked.text
    revoked = create_token(api.repo, "carol", "user", NOW)
    revoke_tokens(api.repo, now=NOW, actor="olga", user="carol")
    expired = create_token(api.repo, "dave", "user", NOW - 120, expires_in=60)
    monitor = create_token(api.repo, "maud", "monitor", NOW)
    mine = api.client.get("/v1/tokens", headers=api.auth("alice")).json()
    callers = {
        "no token": {},
        "wrong token": {"Authorization": "Bearer brd_not-a-token-anyone-was-given"},
        "not bearer": {"Authorization": f"Basic {api.tokens['alice']}"},
        "revoked": {"Authorization": f"Bearer {revoked}"},
        "expired": {"Authorization": f"Bearer {expired}"},
        "other user": api.auth("bob"),
        "user": api.auth("alice"),
        "monitor": {"Authorization": f"Bearer {monitor}"},
    }
    token_id = next(t["id"] for t in _listed(mine) if t["user"] == "alice")
    yield World(api, booked.json()["id"], token_id, callers)


def _listed(answer: Any) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = answer["tokens"] if isinstance(answer, dict) else answer
    return listed


def _booking() -> dict[str, Any]:
    return {"src": "ORNL", "dst": "NERSC", "bandwidth": "1G", "start": iso(3600), "end": iso(7200)}


def _call(world: World, route: Route, headers: dict[str, str]) -> tuple[int, str]:
    api = world.api
    link = next(iter(api.service.topology.links))
    path = (
        route.path.replace("{reservation_id}", world.reservation)
        .replace("{token_id}", world.alice_token)
        .replace("{link}", link)
    )
    query: dict[str, str] = {}
    body: Any = None
    if route.method in ("POST", "PUT", "PATCH"):
        body = _body(world, route, link)
    if route.path == "/v1/availability":
        query = {"mode": "fixed", **{k: str(v) for k, v in _booking().items()}}
    if route.path in ("/v1/reservations", "/v1/tokens") and route.method == "GET":
        query = {"owner": "alice"} if route.path == "/v1/reservations" else {"user": "alice"}
    answer = api.client.request(route.method, path, params=query, json=body, headers=headers)
    return answer.status_code, answer.text


def _body(world: World, route: Route, link: str) -> Any:
    api = world.api
    if route.path == "/v1/topology":
        return api.client.get("/v1/topology", headers=api.auth("olga")).json()
    if route.path == "/v1/maintenance":
        return {"link": link, "start": iso(3600), "end": iso(7200), "reason": "probe"}
    if route.path.endswith("/state"):
        return {"state": "down"}
    if route.path.startswith("/v1/interdomain/"):
        ends = {"src": {"domain": "a", "point": "a1"}, "dst": {"domain": "b", "point": "b1"}}
        return {**_booking(), **ends} if route.method == "POST" else {"bandwidth": "2G"}
    if route.method == "PATCH":
        return {"bandwidth": "2G"}
    return _booking() if route.path == "/v1/reservations" else None


def _cases() -> Iterator[tuple[Route, str]]:
    for route in ROUTES:
        key = (route.method, route.path)
        for who in UNAUTHENTICATED:
            yield route, who
        owned = route.path in OWNED or (
            route.method == "GET" and route.path in ("/v1/reservations", "/v1/tokens")
        )
        if owned and not route.path.startswith(UNCONFIGURED):
            yield route, "other user"
        if key in OPERATOR or key in OPERATOR_OR_MONITOR:
            yield route, "user"
        if key in OPERATOR or (owned and not route.path.startswith(UNCONFIGURED)):
            yield route, "monitor"


CASES = list(_cases())


def test_the_document_lists_every_route_and_the_cases_cover_each() -> None:
    assert len(ROUTES) >= 25
    assert {r for r, _ in CASES} == set(ROUTES)


@pytest.mark.parametrize(("route", "who"), CASES, ids=[f"{r} as {w}" for r, w in CASES])
def test_no_unauthorised_success_and_no_change(world: World, route: Route, who: str) -> None:
    before = world.api.snapshot()
    status, text = _call(world, route, world.callers[who])
    expected = {401} if who in UNAUTHENTICATED else {403, 404}
    if who in ("other user", "monitor") and route.method == "GET" and "{" not in route.path:
        # A listing asked for alice's rows: refused, or answered with none of hers.
        assert status in expected or (status == 200 and "alice" not in text), text
    else:
        assert status in expected, f"{route} as {who}: {status} {text}"
    assert world.api.snapshot() == before, f"{route} as {who} changed the store"
