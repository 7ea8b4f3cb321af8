"""The control protocol's encoding and decoding (no braid-dp needed)."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from braid.adapters.dataplane.protocol import (
    ControlError,
    DirectionCounters,
    GilbertElliott,
    LinkSettings,
    decode_reply,
    encode_request,
    encode_set,
    parse_counters,
)

COUNTER_NAMES = [field.name for field in fields(DirectionCounters)]


def test_set_carries_only_the_fields_that_change() -> None:
    line = encode_set(LinkSettings(delay_ms=150, rate="100M"), "a_to_b")
    assert line.endswith("\n")
    assert json.loads(line) == {
        "cmd": "set",
        "direction": "a_to_b",
        "delay_ms": 150,
        "rate": "100M",
    }


def test_bursty_loss_is_an_object_and_false_switches_it_off() -> None:
    on = json.loads(encode_set(LinkSettings(gilbert=GilbertElliott(p_percent=1, r_percent=25))))
    assert on["gilbert"] == {
        "p_percent": 1,
        "r_percent": 25,
        "bad_loss_percent": 100.0,
        "good_loss_percent": 0.0,
    }
    off = json.loads(encode_set(LinkSettings(gilbert=False)))
    assert off["gilbert"] is None


def test_cut_and_counters_requests() -> None:
    assert json.loads(encode_request("cut")) == {"cmd": "cut", "direction": "both"}
    assert json.loads(encode_request("counters", "b_to_a"))["direction"] == "b_to_a"


def test_bad_direction_and_empty_change_are_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="direction"):
        encode_request("get", "sideways")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="settings"):
        encode_set(LinkSettings())


def test_a_refusal_raises_with_braid_dps_message() -> None:
    with pytest.raises(ControlError, match=r"^delay_ms: expected a number"):
        decode_reply('{"ok":false,"error":"delay_ms: expected a number, got \\"x\\""}')


@pytest.mark.parametrize("line", ["", "not json", "[1]", '{"config":{}}', '{"ok":"yes"}'])
def test_replies_that_are_not_replies_raise(line: str) -> None:
    with pytest.raises(ControlError, match="reply"):
        decode_reply(line)


def test_counters_are_typed_per_direction() -> None:
    values = {name: i for i, name in enumerate(COUNTER_NAMES)}
    reply = decode_reply(json.dumps({"ok": True, "counters": {"a_to_b": values}}))
    counters = parse_counters(reply)
    assert counters["a_to_b"] == DirectionCounters(**values)


def test_incomplete_counters_raise() -> None:
    with pytest.raises(ControlError, match="a_to_b"):
        parse_counters({"ok": True, "counters": {"a_to_b": {"forwarded": 1}}})
    with pytest.raises(ControlError, match="no counters"):
        parse_counters({"ok": True})
