"""The orjson responses send the bytes Starlette's JSONResponse would."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from braid.adapters.api.fastjson import FastJSON

ANSWER: dict[str, Any] = {
    "id": "r-0a1b2c3d4e5f",
    "owner": "zoë",
    "bandwidth": 1234.5,
    "weights": [0.3333333333333333, 0.6666666666666666],
    "paths": [{"nodes": ["A", "B"], "links": ["AB"], "bandwidth": 100.0}],
    "vlans": {1: None},
    "resequence": False,
    "error": {"alternatives": [{"kind": "max_bandwidth", "body": {"bandwidth": 2.5e16}}]},
}


def test_the_bytes_are_those_of_the_standard_encoder() -> None:
    assert FastJSON(ANSWER).body == JSONResponse(ANSWER).body


def test_status_and_headers_are_kept() -> None:
    response = FastJSON({"a": 1}, status_code=409, headers={"x-try": "later"})
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-try"] == "later"
