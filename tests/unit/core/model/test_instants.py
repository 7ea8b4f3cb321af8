"""Instants read the same everywhere: ISO 8601 with an offset, or epoch seconds."""

from __future__ import annotations

import pytest

from braid.core.errors import InputError
from braid.core.model.instants import format_instant, parse_instant, readable_instant
from braid.core.model.units import FOREVER

EPOCH = 1_798_794_000  # 2027-01-01T09:00:00Z


def test_both_forms_give_the_same_instant() -> None:
    forms = (EPOCH, float(EPOCH), str(EPOCH), "2027-01-01T09:00:00Z", "2027-01-01T10:00:00+01:00")
    assert {parse_instant(v, "start") for v in forms} == {EPOCH}
    assert format_instant(EPOCH) == "2027-01-01T09:00:00Z"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("2027-01-01T09:00:00", "no UTC offset"),
        ("2027-01-01T09:00:00.5Z", "whole seconds"),
        ("tomorrow", "a day and a time of day"),
        ("soon", "cannot read"),
        (True, "ISO 8601"),
        (1.5, "integer number of seconds"),
        (float("inf"), "integer number of seconds"),
        (float("nan"), "integer number of seconds"),
        (10**400, "out of range"),
        ("1" + "0" * 400, "out of range"),
        (253_402_300_800, "9999-12-31T23:59:59Z"),
        ("9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59Z"),
        ("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00Z"),
    ],
)
def test_mistakes_name_the_field_and_say_what_to_do(value: object, says: str) -> None:
    with pytest.raises(InputError, match=says) as caught:
        parse_instant(value, "start")
    assert caught.value.field == "start"


def test_an_instant_for_people_is_iso_8601_where_the_calendar_reaches() -> None:
    assert readable_instant(EPOCH) == "2027-01-01T09:00:00Z"
    assert readable_instant(0) == "1970-01-01T00:00:00Z"
    assert readable_instant(FOREVER) == str(FOREVER)  # an open end has no date


def test_the_last_instant_an_answer_can_write_is_taken() -> None:
    last = parse_instant("9999-12-31T23:59:59Z", "end")
    assert format_instant(last) == "9999-12-31T23:59:59Z"


@pytest.mark.parametrize(
    "value",
    [
        "2027-01-01T09:00:00Z\x00",
        "2027-01-01T09:00:00\x00Z",
        "2027-01-01\x0009:00:00Z",
        "2027-01-01T09:00:00Z\n",
        "2027-01-01T09:00:00Z\t",
        "2027-01-01T09:00:00Z\u200b",
        "1798794000\x00",
        "\uff11\uff17\uff19\uff18\uff17\uff19\uff14\uff10\uff10\uff10",  # full-width digits
        "2027-01-01x09:00:00Z",
    ],
)
def test_control_and_foreign_characters_are_refused_with_the_field(value: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_instant(value, "start")
    assert caught.value.field == "start"


def test_spaces_around_epoch_seconds_and_a_space_for_t_still_read() -> None:
    assert parse_instant(f" {EPOCH} ", "start") == EPOCH
    assert parse_instant("2027-01-01 09:00:00Z", "start") == EPOCH
