"""parse_volume: bytes, with SI and binary units; bits and fractions of a byte refused."""

from __future__ import annotations

import pytest

from braid.core.errors import InputError
from braid.core.model.units import format_volume, parse_volume


@pytest.mark.parametrize(
    ("value", "count"),
    [
        (1, 1),
        ("512", 512),
        ("512B", 512),
        ("40TB", 40 * 10**12),
        ("40 TB", 40 * 10**12),
        ("1.5TB", 1_500_000_000_000),
        ("2kB", 2000),
        ("2KB", 2000),
        ("3MB", 3 * 10**6),
        ("7GB", 7 * 10**9),
        ("1PB", 10**15),
        ("1KiB", 1024),
        ("500GiB", 500 * 2**30),
        ("2TiB", 2 * 2**40),
        ("1PiB", 2**50),
        ("1000PB", 10**18),
    ],
)
def test_reads_bytes_with_units(value: object, count: int) -> None:
    assert parse_volume(value) == count


@pytest.mark.parametrize(
    "value",
    ["40Tb", "40b", "5Gib", "0", 0, -3, "1.5B", "0.0001kB", "1001PB", "2EB", "", "TB", "1e3TB",
     "40TB\n", "40\tTB", "４０TB", 1.5, True, None, [1], "5iB"],
)  # fmt: skip
def test_refuses_naming_the_field(value: object) -> None:
    with pytest.raises(InputError) as caught:
        parse_volume(value, "volume")
    assert caught.value.field == "volume"


def test_bits_get_a_hint_in_bytes() -> None:
    with pytest.raises(InputError, match="volumes are bytes: write TB"):
        parse_volume("40Tb")
    with pytest.raises(InputError, match="write GiB"):
        parse_volume("1Gib", "size")


def test_format_volume_is_human() -> None:
    assert format_volume(40 * 10**12) == "40 TB"
    assert format_volume(1_500_000_000) == "1.5 GB"
    assert format_volume(512) == "512 B"
