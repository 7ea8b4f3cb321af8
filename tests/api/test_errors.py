"""Every bad request gets the one error shape, names what to fix, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.harness import MAX_BODY, Api, body, iso

# (what is wrong, the body, the status, the field named)
BAD_BODIES: list[tuple[str, Any, int, str | None]] = [
    ("unknown source", body(src="NOWHERE"), 422, "src"),
    ("unknown destination", body(dst="NOWHERE"), 422, "dst"),
    ("end before start", body(end=iso(1800)), 422, "end"),
    ("end equal to start", body(end=iso(3600)), 422, "end"),
    ("naive datetime", body(start="2030-01-01T01:00:00"), 422, "start"),
    ("zero bandwidth", body(bandwidth=0), 422, "bandwidth"),
    ("negative bandwidth", body(bandwidth="-5G"), 422, "bandwidth"),
    ("bandwidth of the wrong type", body(bandwidth=True), 422, "bandwidth"),
    ("window in the past", body(start=iso(-3600), end=iso(3600)), 422, "start"),
    ("misspelt field", {**body(), "bandwith": "1G"}, 422, "bandwith"),
    ("hold not a flag", body(hold="yes"), 422, "hold"),
    ("unknown mode", body(mode="soon"), 422, "mode"),
    ("max_paths out of range", body(max_paths=99), 422, "max_paths"),
    ("id set by the client", {**body(), "id": "mine"}, 422, "id"),
    ("a list, not an object", [body()], 422, "body"),
    ("bandwidth above every link", body(bandwidth="1T"), 409, None),
    ("bandwidth beyond any network", body(bandwidth="1e400G"), 422, "bandwidth"),
    ("bandwidth of 10**400 Mbit/s", body(bandwidth=10**400), 422, "bandwidth"),
    ("a float bandwidth of 1e308", body(bandwidth=1e308), 422, "bandwidth"),
    ("start beyond year 9999", body(start="99999999999999999999"), 422, "start"),
    ("end beyond year 9999", body(end=253_402_300_800), 422, "end"),
    ("start with a trailing NUL", body(start=iso(3600) + "\x00"), 422, "start"),
    ("end with a NUL for its T", body(end=iso(7200).replace("T", "\x00")), 422, "end"),
    ("earliest with a 10**30 s duration",
     body(mode="earliest", start=None, end=None, not_before=iso(0), duration=10**30),
     422, "duration"),
]  # fmt: skip


@pytest.fixture
def unchanged(api: Api) -> Iterator[Api]:
    """Fails the test if the store changed in any way during it."""
    before = api.snapshot()
    yield api
    assert api.snapshot() == before


def error_of(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert set(response.json()) == {"error"}
    assert error["code"] and error["message"]
    assert all(value not in (None, "", []) for value in error.values())  # empty keys left out
    return error


@pytest.mark.parametrize(
    ("case", "sent", "status", "field"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES]
)
def test_bad_reservation_bodies(
    unchanged: Api, case: str, sent: Any, status: int, field: str | None
) -> None:
    api = unchanged
    response = api.client.post("/v1/reservations", json=sent, headers=api.auth("alice"))
    error = error_of(response, status)
    assert error.get("field") == field, case


def test_malformed_json_names_the_body(unchanged: Api) -> None:
    api = unchanged
    headers = {**api.auth("alice"), "content-type": "application/json"}
    response = api.client.post("/v1/reservations", content=b'{"src": "ORNL",', headers=headers)
    assert error_of(response, 422)["field"] == "body"


def test_bodies_over_the_limit_are_refused_by_length_and_by_count(unchanged: Api) -> None:
    api = unchanged
    headers = {**api.auth("alice"), "content-type": "application/json"}
    padded = b'{"src": "ORNL"' + b" " * MAX_BODY + b"}"
    assert error_of(api.client.post("/v1/reservations", content=padded, headers=headers), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked, counted as it arrives
        yield b'{"src": "ORNL"'
        for _ in range(MAX_BODY // 1000 + 1):
            yield b" " * 1000
        yield b"}"

    response = api.client.post("/v1/reservations", content=chunks(), headers=headers)
    assert error_of(response, 413)["code"] == "too_large"


@pytest.mark.parametrize("header", [None, "Bearer nonsense", "Basic YWxpY2U6eA==", "Bearer "])
def test_missing_or_bad_tokens_get_401(unchanged: Api, header: str | None) -> None:
    api = unchanged
    headers = {"Authorization": header} if header is not None else {}
    response = api.client.post("/v1/reservations", json=body(), headers=headers)
    error_of(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


def calls(reservation_id: str) -> list[tuple[str, str, Any]]:
    url = f"/v1/reservations/{reservation_id}"
    return [
        ("GET", url, None),
        ("DELETE", url, None),
        ("PATCH", url, {"end": iso(3 * 3600)}),
        ("POST", url + "/confirm", None),
        ("GET", url + "/audit", None),
    ]


def test_unknown_ids_get_404(unchanged: Api) -> None:
    api = unchanged
    for method, url, sent in calls("r-doesnotexist"):
        response = api.client.request(method, url, json=sent, headers=api.auth("alice"))
        assert error_of(response, 404)["code"] == "not_found", (method, url)


def test_another_users_reservation_gets_403_and_reveals_nothing(api: Api) -> None:
    sent = body(src="FNAL", dst="BNL")
    mine = api.client.post("/v1/reservations", json=sent, headers=api.auth("alice")).json()
    before = api.snapshot()
    for method, url, data in calls(mine["id"]):
        response = api.client.request(method, url, json=data, headers=api.auth("bob"))
        error_of(response, 403)
        for secret in ("alice", "FNAL", "BNL", mine["token"], mine["start"]):
            assert secret not in response.text, (method, url, secret)
    assert api.snapshot() == before


@pytest.mark.parametrize(
    ("method", "url", "sent"),
    [
        ("PUT", "/v1/topology", {"nodes": [{"id": "A"}, {"id": "B"}], "links": []}),
        ("POST", "/v1/maintenance", {"link": "CHIC-KANS", "start": iso(0), "end": iso(60)}),
    ],
)
def test_users_may_not_change_the_network(unchanged: Api, method: str, url: str, sent: Any) -> None:
    api = unchanged
    response = api.client.request(method, url, json=sent, headers=api.auth("alice"))
    assert error_of(response, 403)["code"] == "forbidden"


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/v1/reservations?stat=held", "stat"),
        ("/v1/reservations?state=sleeping", "state"),
        ("/v1/reservations?start=yesterday", "start"),
        ("/v1/availability?mode=fixed&src=ORNL&dst=NERSC&bandwidth=1G&start=x&end=y", "start"),
        ("/v1/availability?mode=earliest&src=ORNL&dst=NERSC&bandwidth=1G&max_paths=two"
         f"&duration=60&not_before={iso(0)}", "max_paths"),
        (f"/v1/availability?src=ORNL&bandwidth=1G&start={iso(60)}&end={iso(120)}", "dst"),
        ("/v1/availability?bandwidht=1G", "bandwidht"),
        ("/v1/availability?mode=fixed&src=ORNL&dst=NERSC&bandwidth=1e400G"
         f"&start={iso(60)}&end={iso(120)}", "bandwidth"),
        ("/v1/availability?mode=all-slots&src=ORNL&dst=NERSC&bandwidth=1e400G&duration=60"
         f"&window_start={iso(60)}&window_end={iso(7200)}", "bandwidth"),
        ("/v1/availability?mode=earliest&src=ORNL&dst=NERSC&bandwidth=1G"
         f"&duration=99999999999999999999&not_before={iso(0)}", "duration"),
        ("/v1/links?at=1e400", "at"),
        (f"/v1/links?at={iso(60)}%00", "at"),
        ("/v1/availability?mode=fixed&src=ORNL&dst=NERSC&bandwidth=1G"
         f"&start={iso(60)}%00&end={iso(120)}", "start"),
        ("/v1/links?at=99999999999999999999", "at"),
    ],
)  # fmt: skip
def test_bad_queries_name_the_parameter(unchanged: Api, url: str, field: str) -> None:
    api = unchanged
    response = api.client.get(url.replace("+", "%2B"), headers=api.auth("alice"))
    assert error_of(response, 422)["field"] == field


def test_bad_modify_bodies(api: Api) -> None:
    mine = api.client.post("/v1/reservations", json=body(), headers=api.auth("alice")).json()
    url = f"/v1/reservations/{mine['id']}"
    before = api.snapshot()
    for sent, field in (
        ({"end": iso(1800)}, "end"),
        ({"bandwidth": 0}, "bandwidth"),
        ({"start": iso(0)}, "start"),
        ({"end": "tomorrow"}, "end"),
        ({"bandwidth": "1e400G"}, "bandwidth"),
        ({"bandwidth": 10**400}, "bandwidth"),
        ({"end": "99999999999999999999"}, "end"),
    ):
        response = api.client.patch(url, json=sent, headers=api.auth("alice"))
        assert error_of(response, 422)["field"] == field, sent
    assert api.snapshot() == before


def test_unexpected_failures_are_a_short_500_in_the_same_shape(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("disk on fire at /var/secret")

    monkeypatch.setattr(api.service, "get", broken)
    response = api.client.get("/v1/reservations/r-1", headers=api.auth("alice"))
    assert error_of(response, 500)["code"] == "internal"
    assert "secret" not in response.text
    assert "disk on fire" in caplog.text  # logged for the operator


def test_unknown_routes_and_methods_use_the_error_shape(api: Api) -> None:
    assert error_of(api.client.get("/v2/nothing"), 404)["code"] == "not_found"
    wrong = api.client.put("/v1/reservations", headers=api.auth("alice"))
    assert error_of(wrong, 405)["code"] == "method_not_allowed"


def test_bytes_that_are_not_text_count_as_malformed_json(unchanged: Api) -> None:
    api = unchanged
    headers = {**api.auth("alice"), "content-type": "application/json"}
    response = api.client.post("/v1/reservations", content=b"\x8f\xf7`t\xbbj", headers=headers)
    assert error_of(response, 422)["code"] == "invalid_json"
