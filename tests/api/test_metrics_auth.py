"""/metrics is for operator and monitor tokens, unless the server runs with it open."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from braid.adapters.api import create_app
from braid.app.auth import create_token
from tests.api.harness import NOW, Api


@pytest.fixture
def maud(api: Api) -> dict[str, str]:
    return {"Authorization": f"Bearer {create_token(api.repo, 'maud', 'monitor', NOW)}"}


def test_an_operator_and_a_monitor_read_the_metrics(api: Api, maud: dict[str, str]) -> None:
    for headers in (api.auth("olga"), maud):
        answer = api.client.get("/metrics", headers=headers)
        assert answer.status_code == 200, answer.text
        assert "braid_http_requests_total" in answer.text


@pytest.mark.parametrize(
    ("headers", "status", "said"),
    [
        ({}, 401, "missing bearer token"),
        ({"Authorization": "Bearer brd_nobody"}, 401, "token"),
        ({"Authorization": "Basic b2xnYTp4"}, 401, "token"),
    ],
)
def test_no_token_or_a_wrong_one_reads_nothing(
    api: Api, headers: dict[str, str], status: int, said: str
) -> None:
    answer = api.client.get("/metrics", headers=headers)
    assert answer.status_code == status
    assert said in answer.json()["error"]["message"]
    assert "braid_" not in answer.text


def test_a_plain_user_reads_nothing(api: Api) -> None:
    answer = api.client.get("/metrics", headers=api.auth("alice"))
    assert answer.status_code == 403
    assert "operator and monitor" in answer.json()["error"]["message"]
    assert "braid_" not in answer.text


@pytest.mark.parametrize("opened", ["metrics_open", "insecure"])
def test_an_open_server_serves_them_to_anyone(api: Api, opened: str) -> None:
    settings = replace(api.app.state.settings, **{opened: True})
    client = TestClient(create_app(api.service, settings))
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert "braid_http_requests_total" in answer.text
