"""Log lines as JSON objects, each naming the request it was made for."""

from __future__ import annotations

import json
import logging

import pytest

from braid.adapters.logs import configure_logging
from braid.app.request_context import REQUEST_ID


def test_json_lines_carry_the_request_id(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("json")
    try:
        token = REQUEST_ID.set("req-7")
        try:
            logging.getLogger("braid.test").warning("the store answered %s", "slowly")
        finally:
            REQUEST_ID.reset(token)
        logging.getLogger("braid.test").error("outside a request")
    finally:
        configure_logging("text")
    first, second = (json.loads(line) for line in capsys.readouterr().err.splitlines())
    assert first["message"] == "the store answered slowly" and first["request_id"] == "req-7"
    assert first["level"] == "warning" and first["logger"] == "braid.test"
    assert "request_id" not in second


def test_text_lines_name_the_request_too(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("text")
    token = REQUEST_ID.set("req-8")
    try:
        logging.getLogger("braid.test").warning("hello")
    finally:
        REQUEST_ID.reset(token)
    assert "hello [request req-8]" in capsys.readouterr().err


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="text, json"):
        configure_logging("yaml")
