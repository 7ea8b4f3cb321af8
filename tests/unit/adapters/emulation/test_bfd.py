"""BFD settings: the intervals OVS is given, refused when out of range, naming the field."""

from __future__ import annotations

import pytest

from braid.adapters.emulation.bfd import BfdSettings
from braid.core.errors import InputError


def test_settings_become_the_interface_columns() -> None:
    assert BfdSettings(20, 30).columns() == [
        "bfd:enable=true",
        "bfd:min_tx=20",
        "bfd:min_rx=30",
    ]


@pytest.mark.parametrize(
    ("tx", "rx", "field"),
    [(0, 50, "min_tx_ms"), (50, 0, "min_rx_ms"), (50, 60_001, "min_rx_ms"), (True, 5, "min_tx_ms")],
)
def test_intervals_out_of_range_name_the_field(tx: int, rx: int, field: str) -> None:
    with pytest.raises(InputError) as caught:
        BfdSettings(tx, rx)
    assert caught.value.field == field
