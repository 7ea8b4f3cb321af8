"""The controller API's bearer token, and its Unix socket kept to its owner."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from braid.adapters.southbound.api_token import TokenFileError, read_token_file
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.http_api import ApiServer, make_server
from braid.adapters.southbound.osken_main import parse_args
from tests.unit.adapters.southbound.test_controller_api import FakeBackend

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, ApiServer]]:
    address = f"unix:{tmp_path}/api.sock"
    server = make_server(FakeBackend({"s1": 1}), address, TOKEN)
    server.start()
    yield address, server
    server.stop()


def test_the_right_token_works(served: tuple[str, ApiServer]) -> None:
    with ControllerDriver(served[0], token=TOKEN) as driver:
        assert driver.switches() == {1: "s1"}


@pytest.mark.parametrize("token", [None, "wrong", TOKEN + "x", TOKEN[:-1], ""])
def test_a_missing_or_wrong_token_is_refused(
    served: tuple[str, ApiServer], token: str | None
) -> None:
    with ControllerDriver(served[0], token=token) as driver:
        with pytest.raises(SouthboundError, match=r"refused braid: (missing|wrong) API token"):
            driver.switches()
        # Every route, whatever the method, and unknown ones too: nothing is revealed.
        routes = [
            ("POST", "/v1/apply"), ("GET", "/v1/dump"), ("GET", "/nothing"),
            ("GET", "/v1/switches/1/flows"), ("GET", "/v1/switches/1/meters"),
            ("POST", "/v1/switches/1/packet-out"),
        ]  # fmt: skip
        for method, path in routes:
            response = driver._client.request(method, path, json={})
            assert response.status_code == 401
            assert set(response.json()) == {"error"}
            assert response.headers["www-authenticate"] == "Bearer"


def test_another_scheme_is_refused(served: tuple[str, ApiServer]) -> None:
    transport = httpx.HTTPTransport(uds=served[0][len("unix:") :])
    with httpx.Client(transport=transport, base_url="http://c") as client:
        response = client.get("/v1/switches", headers={"Authorization": f"Basic {TOKEN}"})
    assert response.status_code == 401


@pytest.mark.parametrize("token", [None, TOKEN])
def test_the_socket_is_its_owners_only(tmp_path: Path, token: str | None) -> None:
    path = tmp_path / "api.sock"
    path.write_text("stale")  # a leftover of an earlier run is replaced
    server = make_server(FakeBackend({"s1": 1}), f"unix:{path}", token)
    server.start()
    try:
        mode = path.stat().st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o600
    finally:
        server.stop()


def test_a_token_file_holds_one_token(tmp_path: Path) -> None:
    good = tmp_path / "token"
    good.write_text(f"  {TOKEN}\n")
    assert read_token_file(good) == TOKEN
    for text in ["", "\n", "two words"]:
        bad = tmp_path / "bad"
        bad.write_text(text)
        with pytest.raises(TokenFileError, match="must hold one token"):
            read_token_file(bad)
    with pytest.raises(TokenFileError, match="cannot read"):
        read_token_file(tmp_path / "missing")


def test_the_controller_takes_the_token_from_a_file(tmp_path: Path) -> None:
    args = parse_args(["--api-token-file", str(tmp_path / "t")])
    assert args.api_token_file == tmp_path / "t"
    assert parse_args([]).api_token_file is None


def test_another_client_of_a_session_s_controller_sends_its_token() -> None:
    from types import SimpleNamespace
    from typing import Any

    from braid.emulation.failover.lab import method_driver

    session: Any = SimpleNamespace(live_driver=ControllerDriver("127.0.0.1:1", token=TOKEN))
    driver = method_driver("controller", session, "site-a")
    assert isinstance(driver, ControllerDriver) and driver.token == TOKEN
    driver.close()
    session.live_driver.close()
