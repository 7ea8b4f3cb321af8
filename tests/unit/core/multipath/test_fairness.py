"""Jain's fairness index: 1 for equal shares, 1/n for one flow taking all."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.multipath import jain_index


def test_equal_shares_are_fair_and_one_flow_alone_is_one_over_n() -> None:
    assert jain_index([5.0] * 10) == pytest.approx(1.0)
    assert jain_index([9.0] + [0.0] * 9) == pytest.approx(0.1)
    assert jain_index([0.0, 0.0]) == 1.0
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / 20)


def test_bad_rates_are_refused() -> None:
    with pytest.raises(InputError, match="rates"):
        jain_index([])
    with pytest.raises(InputError, match="rates"):
        jain_index([1.0, -1.0])


@given(st.lists(st.floats(0, 1e9), min_size=1, max_size=20), st.floats(0.001, 1000))
def test_between_one_over_n_and_one_and_unit_free(rates: list[float], factor: float) -> None:
    index = jain_index(rates)
    assert 1 / len(rates) - 1e-9 <= index <= 1 + 1e-9
    if sum(rates) > 1e-3:
        assert jain_index([r * factor for r in rates]) == pytest.approx(index, rel=1e-6)
