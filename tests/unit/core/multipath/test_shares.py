"""Exact proportional shares and the weights the edge switch uses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.multipath import proportional_shares, weights


@given(st.lists(st.integers(1, 10**12), min_size=1, max_size=8), st.data())
def test_shares_are_exact_and_capped(amounts: list[int], data: st.DataObject) -> None:
    need = data.draw(st.integers(0, sum(amounts)))
    shares = proportional_shares(need, amounts)
    assert sum(shares) == need
    total = sum(amounts)
    for share, amount in zip(shares, amounts, strict=True):
        assert 0 <= share <= amount
        assert need * amount // total <= share <= need * amount // total + 1


def test_remainder_goes_to_the_earlier_path() -> None:
    assert proportional_shares(5, [3, 3]) == (3, 2)
    assert proportional_shares(1000, [900, 100]) == (900, 100)
    assert proportional_shares(7, [3, 3, 3]) == (3, 2, 2)


def test_shares_refuse_impossible_requests() -> None:
    with pytest.raises(ValueError):
        proportional_shares(11, [5, 5])
    with pytest.raises(ValueError):
        proportional_shares(1, [0])


@given(st.lists(st.integers(1, 10**12), min_size=1, max_size=8))
def test_weights_sum_to_one(shares: list[int]) -> None:
    w = weights(shares)
    assert len(w) == len(shares)
    assert abs(sum(w) - 1.0) < 1e-9
    assert all(abs(x - s / sum(shares)) < 1e-5 for x, s in zip(w, shares, strict=True))
    assert all(round(x, 6) == x for x in w)
