import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.model.units import (
    format_bandwidth,
    parse_bandwidth,
    parse_duration,
    parse_seconds,
    to_mbps,
)


@pytest.mark.parametrize(
    ("value", "bps"),
    [
        (500, 500_000_000),
        (2.5, 2_500_000),
        ("500M", 500_000_000),
        ("10G", 10_000_000_000),
        ("2.5Gbps", 2_500_000_000),
        ("100 Mbit/s", 100_000_000),
        ("800k", 800_000),
        ("1T", 10**12),
        ("1000bps", 1000),
        ("1e3", 1_000_000_000),
        ("250", 250_000_000),
    ],
)
def test_parse_bandwidth_reads_numbers_as_mbps_and_units_exactly(value: object, bps: int) -> None:
    assert parse_bandwidth(value) == bps


@pytest.mark.parametrize("value", [0, -5, "-5G", "0M", "ten", "", None, True, [1], "5 parsecs"])
def test_parse_bandwidth_rejects_with_the_field_named(value: object) -> None:
    with pytest.raises(InputError) as caught:
        parse_bandwidth(value, "links[2].capacity")
    assert caught.value.field == "links[2].capacity"
    assert str(caught.value).startswith("links[2].capacity:")


def test_zero_allowed_only_when_asked() -> None:
    assert parse_bandwidth(0, allow_zero=True) == 0


def test_output_in_mbps_stays_exact() -> None:
    assert to_mbps(10_000_000_000) == 10_000
    assert to_mbps(2_500_000) == 2.5
    assert isinstance(to_mbps(1_000_000), int)


def test_format_bandwidth_is_human() -> None:
    assert format_bandwidth(10**10) == "10 Gbit/s"
    assert format_bandwidth(2_500_000_000) == "2.5 Gbit/s"
    assert format_bandwidth(999) == "999 bit/s"


def test_parse_seconds() -> None:
    assert parse_seconds(60, "duration") == 60
    assert parse_seconds("60", "duration") == 60
    assert parse_seconds(60.0, "duration") == 60
    for bad in (1.5, "soon", None, True):
        with pytest.raises(InputError, match="duration"):
            parse_seconds(bad, "duration")


def test_durations_take_a_unit_and_stay_whole_seconds() -> None:
    from braid.core.model.units import parse_duration

    assert [parse_duration(v, "duration") for v in (3600, "90s", "15m", "2h", "1d", "1.5h")] == [
        3600,
        90,
        900,
        7200,
        86400,
        5400,
    ]
    for bad in ("2x", "1.5s", "h", True):
        with pytest.raises(InputError) as caught:
            parse_duration(bad, "duration")
        assert caught.value.field == "duration"


@pytest.mark.parametrize(
    "value",
    ["1e400G", "1e400", 1e308, 10**400, "1e999999999", "1e999999999G", "1001T", 10**9 + 1],
)
def test_parse_bandwidth_refuses_what_no_network_carries(value: object) -> None:
    with pytest.raises(InputError, match="at most 1 Pbit/s") as caught:
        parse_bandwidth(value, "bandwidth")
    assert caught.value.field == "bandwidth"
    assert len(caught.value.message) < 120  # a huge number is quoted cut short


def test_parse_bandwidth_takes_the_bound_itself() -> None:
    assert parse_bandwidth("1000T") == 10**15
    assert format_bandwidth(parse_bandwidth("1000T")) == "1000 Tbit/s"


@pytest.mark.parametrize("value", [10**400, "1e999999999", -(10**13), float("inf"), "nan"])
def test_parse_seconds_refuses_numbers_out_of_every_range(value: object) -> None:
    with pytest.raises(InputError) as caught:
        parse_seconds(value, "start")
    assert caught.value.field == "start"


@pytest.mark.parametrize("value", [-1, "101000000d", 3_155_760_001, 10**30])
def test_durations_are_from_zero_to_a_hundred_years(value: object) -> None:
    with pytest.raises(InputError) as caught:
        parse_duration(value, "duration")
    assert caught.value.field == "duration"
    assert parse_duration("36525d", "duration") == 3_155_760_000


@pytest.mark.parametrize("value", ["10G\n", "10G\x00", "\t10G", "10\x1fG"])
def test_bandwidths_with_control_characters_are_refused(value: str) -> None:
    with pytest.raises(InputError, match="cannot read"):
        parse_bandwidth(value, "bandwidth")
    assert parse_bandwidth(" 10 G ") == 10**10


@pytest.mark.parametrize("value", ["1h\n", "1h\x00", "60\x00", "\uff16\uff10"])
def test_durations_with_control_characters_are_refused(value: str) -> None:
    with pytest.raises(InputError):
        parse_duration(value, "duration")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2 days", 172_800),
        ("90 minutes", 5_400),
        ("1h30m", 5_400),
        ("1h 30m", 5_400),
        ("3.5h", 12_600),
        ("2d", 172_800),
        ("1 day 2 hours", 93_600),
        ("1 hour", 3_600),
        ("45 mins", 2_700),
        ("2 weeks", 1_209_600),
        ("30 seconds", 30),
        ("1.5 Hours", 5_400),
    ],
)
def test_durations_read_in_words_and_in_several_parts(text: str, seconds: int) -> None:
    assert parse_duration(text, "duration") == seconds


@pytest.mark.parametrize("text", ["1h 30", "2 fortnights", "h30", "1..5h", "", "1h-30m", "1e3h"])
def test_durations_that_do_not_read_name_the_field(text: str) -> None:
    with pytest.raises(InputError, match="expected a duration") as caught:
        parse_duration(text, "duration")
    assert caught.value.field == "duration"


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0, "0 seconds"),
        (1, "1 second"),
        (45 * 60, "45 minutes"),
        (3 * 3600, "3 hours"),
        (3 * 3600 + 1800, "3 hours 30 minutes"),
        (2 * 86400 + 3 * 3600, "2 days 3 hours"),
        (86400 + 61, "1 day 1 minute 1 second"),
        (-90, "minus 1 minute 30 seconds"),
    ],
)
def test_durations_for_people_are_exact(seconds: int, said: str) -> None:
    from braid.core.model.units import human_duration

    assert human_duration(seconds) == said


@given(st.integers(0, 3_155_760_000))
def test_a_human_duration_reads_back_to_its_seconds(seconds: int) -> None:
    from braid.core.model.units import human_duration

    assert parse_duration(human_duration(seconds), "duration") == seconds
