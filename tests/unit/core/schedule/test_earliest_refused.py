"""Earliest start told that `not_before` was refused already answers the same, exactly."""

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.network import Network
from braid.core.schedule import earliest_start, fixed_path
from tests.unit.core.netgen import HORIZON, feasible, loaded_networks


@settings(max_examples=150, deadline=None)
@given(
    loaded_networks(),
    st.integers(1, 10),
    st.integers(1, 12),
    st.integers(0, HORIZON),
    st.booleans(),
    st.data(),
)
def test_skipping_the_refused_first_search_changes_no_answer(
    network: Network,
    need: int,
    duration: int,
    not_before: int,
    symmetric: bool,
    data: st.DataObject,
) -> None:
    src, dst = data.draw(st.permutations(sorted(network.topology.nodes)))[:2]
    end = not_before + duration
    refused = fixed_path(network, src, dst, need, not_before, end, symmetric=symmetric) is None
    # Told even when untrue: the search of every chunk still finds not_before.
    got = earliest_start(
        network, src, dst, need, duration, not_before, symmetric=symmetric, refused_at_start=True
    )
    assert got == earliest_start(network, src, dst, need, duration, not_before, symmetric=symmetric)
    expected = next(
        (
            s
            for s in range(not_before, not_before + HORIZON + 2)
            if feasible(network, src, dst, need, s, s + duration, symmetric)
        ),
        None,
    )
    assert got == expected
    assert refused == (expected != not_before)
