"""Local times in an IANA zone, day words against `now`, and the DST rules."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.model.instants import (
    format_instant,
    format_instant_in,
    parse_instant,
    readable_instant_in,
)
from braid.core.model.units import FOREVER, MAX_INSTANT, MIN_INSTANT

# Thursday 2026-12-03 10:31:00 UTC (11:31 in Paris, 04:31 in Chicago).
NOW = 1_796_293_860
ZONES = ("Europe/Paris", "America/Chicago", "Asia/Kolkata", "Australia/Lord_Howe", "UTC")


def at(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp())


def test_the_clock_in_the_tests_is_what_it_says() -> None:
    assert format_instant(NOW) == "2026-12-03T10:31:00Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-12-04 17:00 America/Chicago", "2026-12-04T17:00:00-06:00"),
        ("2026-12-04T17:00 Europe/Paris", "2026-12-04T17:00:00+01:00"),
        ("2026-12-04T17:00:30 Europe/Paris", "2026-12-04T17:00:30+01:00"),
        ("2026-12-04 Europe/Paris", "2026-12-04T00:00:00+01:00"),
        ("2026-07-01 09:00 Europe/Paris", "2026-07-01T09:00:00+02:00"),
        ("2026-12-04 17:00 UTC", "2026-12-04T17:00:00+00:00"),
        ("2026-12-04  17:00   Asia/Kolkata", "2026-12-04T17:00:00+05:30"),
    ],
)
def test_a_local_time_names_its_zone(value: str, expected: str) -> None:
    assert parse_instant(value, "start") == at(expected)
    # a zone written after the time wins over the caller's default
    assert parse_instant(value, "start", zone="Asia/Tokyo") == at(expected)


def test_a_time_without_offset_or_zone_takes_the_default_zone() -> None:
    assert parse_instant("2026-12-04 17:00", "end", zone="America/Chicago") == at(
        "2026-12-04T17:00:00-06:00"
    )
    assert parse_instant("2026-12-04T17:00:00", "end", zone="Europe/Paris") == at(
        "2026-12-04T17:00:00+01:00"
    )


def test_an_offset_wins_over_the_default_zone() -> None:
    assert parse_instant("2027-01-01T09:00:00Z", "start", zone="Asia/Tokyo") == at(
        "2027-01-01T09:00:00+00:00"
    )
    assert parse_instant(1_798_794_000, "start", zone="Asia/Tokyo") == 1_798_794_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("friday 17:00", "2026-12-04T17:00:00+01:00"),
        ("fri 17:00", "2026-12-04T17:00:00+01:00"),
        ("Friday 17:00", "2026-12-04T17:00:00+01:00"),
        ("today 09:30", "2026-12-03T09:30:00+01:00"),  # today's, even though it has passed
        ("tomorrow 08:00", "2026-12-04T08:00:00+01:00"),
        ("thursday 11:31", "2026-12-03T11:31:00+01:00"),  # at now: today
        ("thursday 11:30", "2026-12-10T11:30:00+01:00"),  # just passed: a week on
        ("thu 23:59:59", "2026-12-03T23:59:59+01:00"),
        ("wednesday 12:00", "2026-12-09T12:00:00+01:00"),
        ("sun 00:00", "2026-12-06T00:00:00+01:00"),
        ("friday 17:00 America/Chicago", "2026-12-04T17:00:00-06:00"),
    ],
)
def test_day_words_are_read_against_now_in_the_zone(value: str, expected: str) -> None:
    assert parse_instant(value, "start", zone="Europe/Paris", now=NOW) == at(expected)


def test_today_is_the_date_in_the_zone_not_in_utc() -> None:
    # 2026-12-03 10:31 UTC is already the 4th on Kiritimati (UTC+14).
    assert parse_instant("today 08:00", "start", zone="Pacific/Kiritimati", now=NOW) == at(
        "2026-12-04T08:00:00+14:00"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [("now", NOW), ("NOW", NOW), ("now+2h", NOW + 7200), ("now - 30m", NOW - 1800)],
)
def test_now_and_now_plus_a_duration_need_no_zone(value: str, expected: int) -> None:
    assert parse_instant(value, "start", now=NOW) == expected
    assert parse_instant("now + 2 days", "start", now=NOW) == NOW + 2 * 86400


def test_the_spring_gap_is_refused_with_what_happened() -> None:
    with pytest.raises(InputError, match="does not exist in Europe/Paris") as caught:
        parse_instant("2026-03-29 02:30 Europe/Paris", "not_before")
    assert caught.value.field == "not_before"
    assert "skip 1 hour" in caught.value.message
    with pytest.raises(InputError, match="does not exist in America/Chicago"):
        parse_instant("2026-03-08 02:00", "start", zone="America/Chicago")


def test_the_autumn_fold_is_the_earlier_of_the_two() -> None:
    # 02:30 happens twice in Paris on 2026-10-25: at +02:00, then at +01:00.
    assert parse_instant("2026-10-25 02:30 Europe/Paris", "start") == at(
        "2026-10-25T02:30:00+02:00"
    )
    # an offset says which one, when the later is meant
    assert parse_instant("2026-10-25T02:30:00+01:00", "start") == at("2026-10-25T02:30:00+01:00")


def test_a_day_word_that_lands_in_a_gap_is_refused() -> None:
    saturday = at("2026-03-28T12:00:00+01:00")
    with pytest.raises(InputError, match="does not exist"):
        parse_instant("tomorrow 02:30", "start", zone="Europe/Paris", now=saturday)


@pytest.mark.parametrize(
    ("value", "zone", "now", "says"),
    [
        ("2026-12-04 17:00", None, None, "no UTC offset and no time zone"),
        ("2026-12-04 17:00 Europe/Pariss", None, None, "did you mean Europe/Paris"),
        ("2026-12-04 17:00 europe/paris", None, None, "did you mean Europe/Paris"),
        ("2026-12-04 17:00 Mars/Olympus", None, None, "unknown time zone 'Mars/Olympus'"),
        ("2026-12-04 17:00 localtime", None, None, "not a time zone"),
        ("2026-12-04 17:00+01:00 Europe/Paris", None, None, "both an offset and a zone"),
        ("friday 17:00", None, NOW, "no UTC offset and no time zone"),
        ("friday 17:00", "Europe/Paris", None, "relative to the current time"),
        ("now", None, None, "relative to the current time"),
        ("now + soon", None, NOW, "expected a duration"),
        ("friday", "Europe/Paris", NOW, "a day and a time of day"),
        ("friday at 17:00", "Europe/Paris", NOW, "a day and a time of day"),
        ("friday 25:00", "Europe/Paris", NOW, "not a time of day"),
        ("friday 5pm", "Europe/Paris", NOW, "HH:MM"),
        ("2026-12-04 17:00:00.5 Europe/Paris", None, None, "whole seconds"),
        ("9999-12-31 23:00 America/Chicago", None, None, "9999"),
        ("now soon", None, NOW, "use now, now"),
        ("0001-01-01 00:30 Asia/Tokyo", None, None, "years 1 to 9999"),
        ("2026-13-04 17:00 Europe/Paris", None, None, "cannot read"),
    ],
)
def test_every_refusal_names_the_field(
    value: str, zone: str | None, now: int | None, says: str
) -> None:
    with pytest.raises(InputError, match=says) as caught:
        parse_instant(value, "deadline", zone=zone, now=now)
    assert caught.value.field == "deadline"


def test_a_bad_default_zone_is_named_as_the_tz_setting() -> None:
    with pytest.raises(InputError, match="unknown time zone") as caught:
        parse_instant("2026-12-04 17:00", "start", zone="Nowhere/Atall")
    assert caught.value.field == "tz"


@pytest.mark.parametrize("value", ["2027-01-01T09:00:00", "2026-12-04 17:00", "2026-12-04T17"])
def test_the_hint_names_both_ways_and_never_only_utc(value: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_instant(value, "start")
    said = caught.value.message
    assert f"{value}+01:00" in said  # an offset
    assert f"{value} Europe/Paris" in said  # a zone
    assert "--tz" in said  # a default zone
    assert "Z " not in said and not said.endswith("Z") and "+00:00" not in said


def test_the_hint_for_a_day_word_offers_a_zone() -> None:
    with pytest.raises(InputError) as caught:
        parse_instant("tomorrow 08:00", "start", now=NOW)
    assert "'tomorrow 08:00 Europe/Paris'" in caught.value.message
    assert "08:00+01:00" not in caught.value.message  # a day word takes no offset


def test_output_in_a_zone_is_iso_with_its_offset_or_readable() -> None:
    epoch = at("2026-12-04T17:00:00-06:00")
    assert format_instant_in(epoch, "America/Chicago") == "2026-12-04T17:00:00-06:00"
    assert format_instant_in(epoch, None) == "2026-12-04T23:00:00Z"
    assert format_instant_in(None, "America/Chicago") is None
    assert readable_instant_in(epoch, "America/Chicago") == "2026-12-04 17:00:00 CST (-06:00)"
    assert readable_instant_in(epoch, "Asia/Dubai") == "2026-12-05 03:00:00 +04:00"
    assert readable_instant_in(epoch, None) == "2026-12-04T23:00:00Z"
    assert readable_instant_in(FOREVER, "Europe/Paris") == str(FOREVER)


instants = st.integers(MIN_INSTANT + 86400, MAX_INSTANT - 86400)


@given(epoch=instants, zone=st.sampled_from(ZONES))
def test_iso_in_a_zone_reads_back_to_the_same_instant(epoch: int, zone: str) -> None:
    assert parse_instant(format_instant_in(epoch, zone), "start") == epoch
    assert parse_instant(format_instant_in(epoch, zone), "start", zone="Asia/Tokyo") == epoch


@given(epoch=instants, zone=st.sampled_from(ZONES))
def test_a_wall_time_and_its_zone_read_back_but_for_the_second_pass_of_a_fold(
    epoch: int, zone: str
) -> None:
    local = datetime.fromtimestamp(epoch, UTC).astimezone(ZoneInfo(zone))
    wall = local.replace(tzinfo=None).isoformat(sep=" ")
    got = parse_instant(f"{wall} {zone}", "start")
    assert parse_instant(wall, "start", zone=zone) == got
    if local.fold == 0:
        assert got == epoch
    else:  # the same wall time came round again: the earlier is meant
        assert got < epoch
        assert datetime.fromtimestamp(got, ZoneInfo(zone)).replace(tzinfo=None) == (
            local.replace(tzinfo=None)
        )


@given(
    now=st.integers(at("2000-01-01T00:00:00+00:00"), at("2090-01-01T00:00:00+00:00")),
    day=st.sampled_from(("mon", "tue", "wed", "thu", "fri", "sat", "sun")),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
    zone=st.sampled_from(ZONES),
)
def test_a_weekday_is_its_next_occurrence_at_or_after_now(
    now: int, day: str, hour: int, minute: int, zone: str
) -> None:
    try:
        got = parse_instant(f"{day} {hour:02}:{minute:02}", "start", zone=zone, now=now)
    except InputError as exc:  # a wall time in a gap: the only refusal
        assert "does not exist" in exc.message
        return
    local = datetime.fromtimestamp(got, ZoneInfo(zone))
    assert local.strftime("%a").lower() == day
    assert (local.hour, local.minute) == (hour, minute)
    assert got >= now - 3600  # a fold's earlier pass may be just behind now
    assert got - now < 8 * 86400
