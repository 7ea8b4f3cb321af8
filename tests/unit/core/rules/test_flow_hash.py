from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.rules.flow_hash import (
    FiveTuple,
    choose,
    owned_fraction,
    pick_weighted,
    symmetric_hash,
)

ips = st.ip_addresses(v=4).map(str)
ports = st.integers(0, 65535)
flows = st.builds(FiveTuple, ips, ips, st.sampled_from([6, 17]), ports, ports)
weight_lists = st.lists(st.integers(0, 1000), min_size=1, max_size=6).filter(lambda w: sum(w) > 0)


@given(flows, st.integers(0, 2**32))
def test_both_directions_hash_alike(flow: FiveTuple, basis: int) -> None:
    assert symmetric_hash(flow, basis) == symmetric_hash(flow.reversed(), basis)


def test_the_hash_is_stable_across_processes() -> None:
    # Pinned: another braid process (or the SDX element) must pick the same path.
    flow = FiveTuple("10.0.0.1", "10.0.0.2", 6, 40000, 5201)
    assert symmetric_hash(flow) == 0xA62B43C13DB582CE


def test_different_flows_hash_differently() -> None:
    a = FiveTuple("10.0.0.1", "10.0.0.2", 6, 40000, 5201)
    b = FiveTuple("10.0.0.1", "10.0.0.2", 6, 40001, 5201)
    assert symmetric_hash(a) != symmetric_hash(b)
    assert symmetric_hash(a, basis=1) != symmetric_hash(a)


@given(weight_lists)
def test_each_index_owns_its_exact_share_of_the_hash_space(weights: list[int]) -> None:
    owned = [owned_fraction(i, weights)[0] for i in range(len(weights))]
    space = 2**64
    assert sum(owned) == space
    for count, weight in zip(owned, weights, strict=True):
        assert abs(count * sum(weights) - weight * space) <= sum(weights)
        assert (count == 0) == (weight == 0)


@given(weight_lists, st.integers(0, 2**64 - 1))
def test_pick_lands_in_the_owned_range(weights: list[int], value: int) -> None:
    index = pick_weighted(value, weights)
    assert weights[index] > 0
    start = sum(owned_fraction(i, weights)[0] for i in range(index))
    assert start <= value < start + owned_fraction(index, weights)[0]


@given(flows, weight_lists)
def test_choose_is_symmetric(flow: FiveTuple, weights: list[int]) -> None:
    assert choose(flow, weights) == choose(flow.reversed(), weights)


@pytest.mark.parametrize("weights", [[], [0, 0], [1, -1]])
def test_bad_weights_are_refused(weights: list[int]) -> None:
    with pytest.raises(InputError, match="weights"):
        pick_weighted(5, weights)
