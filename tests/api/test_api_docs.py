"""/docs and /redoc render from assets braid serves itself: nothing is fetched from outside."""

from __future__ import annotations

import re

import pytest

from braid.adapters.api.api_docs import ASSET_FILES, ASSETS
from tests.api.harness import Api

REFERENCE = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url:\s*["']([^"']+)["']""")
TYPES = {".js": "javascript", ".css": "text/css", ".png": "image/png"}


def _references(html: str) -> list[str]:
    return [a or b for a, b in REFERENCE.findall(html)]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_page_names_only_local_urls_and_each_is_served(api: Api, page: str) -> None:
    response = api.client.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    urls = _references(response.text)
    assert "/openapi.json" in urls
    assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    assert "http" not in response.text.replace("http-equiv", "")
    for url in urls:
        assert api.client.get(url).status_code == 200, url


@pytest.mark.parametrize("name", ASSET_FILES)
def test_every_asset_is_shipped_with_its_type(api: Api, name: str) -> None:
    response = api.client.get(f"{ASSETS}/{name}")
    assert response.status_code == 200
    assert len(response.content) > 1000
    kind = next(t for suffix, t in TYPES.items() if name.endswith(suffix))
    assert kind in response.headers["content-type"]


def test_the_pages_stay_out_of_the_api_document(api: Api) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/docs", "/redoc"))]
