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
        ("tomorrow", "cannot read"),
        (True, "ISO 8601"),
        (1.5, "integer number of seconds"),
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
