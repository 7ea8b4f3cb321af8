"""The web interface's files: served at / with their types and a strict CSP."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.api.harness import Api

STATIC = Path(__file__).resolve().parents[2] / "src/braid/adapters/api/ui/static"


def test_the_page_and_every_asset_carry_their_type_and_the_csp(api: Api) -> None:
    page = api.client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "connect-src 'self'" in csp and "unsafe" not in csp
    kinds = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
    for asset in sorted(STATIC.iterdir()):
        if asset.suffix not in kinds:
            continue
        response = api.client.get(f"/ui/{asset.name}")
        assert response.status_code == 200, asset.name
        assert response.headers["content-type"].startswith(kinds[asset.suffix])
        assert response.headers["content-security-policy"] == csp
        assert response.content == asset.read_bytes()


def test_the_page_loads_nothing_from_elsewhere() -> None:
    # Every src/href/import in the shipped files is relative or on this origin.
    remote = re.compile(r"""(?:src|href)=["']?(?:https?:)?//|import[^;]*["'](?:https?:)?//""")
    for asset in STATIC.iterdir():
        assert not remote.search(asset.read_text()), asset.name


@pytest.mark.parametrize(
    "name", ["../__init__.py", "..%2F__init__.py", "nothing.js", ".hidden.js", "app.py", "x"]
)
def test_nothing_outside_the_static_files_is_served(api: Api, name: str) -> None:
    assert api.client.get(f"/ui/{name}").status_code == 404


def test_the_page_is_left_out_of_the_api_schema(api: Api) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    assert "/" not in paths and not any(p.startswith("/ui") for p in paths)
    assert "/v1/links/{link}/usage" in paths and "/v1/me" in paths
