from __future__ import annotations

import warnings

# Starlette's TestClient warns that it will move to another HTTP package; not ours to fix.
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")

import pytest  # noqa: E402

from tests.api.harness import Api, build  # noqa: E402


@pytest.fixture
def api() -> Api:
    return build()
