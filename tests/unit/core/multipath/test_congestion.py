"""A congested path's weight drops to zero; the others keep their booked shares (seed 002)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.multipath import (
    CongestionPolicy,
    PathCounts,
    confirmed,
    reweighed,
    window_verdicts,
)

POLICY = CongestionPolicy(loss_above=0.25, min_frames=8)


def test_a_path_losing_most_of_its_frames_is_congested_and_a_quiet_one_undecided() -> None:
    base = (PathCounts(100, 90), PathCounts(100, 95), PathCounts(50, 50))
    now = (PathCounts(200, 120), PathCounts(300, 290), PathCounts(55, 55))
    # 30 of 100 arrived (70 % lost); 195 of 200; 5 sent: too few to tell.
    assert window_verdicts(base, now, POLICY) == (True, False, None)


def test_frames_in_flight_below_the_limit_are_not_congestion() -> None:
    assert window_verdicts((PathCounts(0, 0),), (PathCounts(100, 80),), POLICY) == (False,)


def test_the_congested_path_goes_to_zero_and_the_rest_share_by_booking() -> None:
    shares = (1 / 3, 2 / 3)
    assert reweighed(shares, shares, (True, False)) == (0.0, 1.0)
    # An undecided path keeps its share; shares are renormalised over the paths left.
    new = reweighed((0.25, 0.25, 0.5), (0.25, 0.25, 0.5), (True, None, False))
    assert new == pytest.approx((0.0, 1 / 3, 2 / 3), abs=1e-6)


def test_a_path_already_at_zero_stays_there_and_all_congested_changes_nothing() -> None:
    assert reweighed((0.5, 0.5), (0.0, 1.0), (None, False)) == (0.0, 1.0)
    assert reweighed((0.5, 0.5), (0.5, 0.5), (True, True)) == (0.5, 0.5)


def test_bad_input_says_which_field() -> None:
    with pytest.raises(InputError, match="loss_above"):
        CongestionPolicy(loss_above=1.5)
    with pytest.raises(InputError, match="min_frames"):
        CongestionPolicy(min_frames=0)
    with pytest.raises(InputError, match="windows"):
        CongestionPolicy(windows=0)
    with pytest.raises(InputError, match="verdicts"):
        confirmed((0,), (True, False), POLICY)
    with pytest.raises(InputError, match="now"):
        window_verdicts((PathCounts(0, 0),), (), POLICY)
    with pytest.raises(InputError, match="shares"):
        reweighed((0.0, 0.0), (1.0, 1.0), (False, False))
    with pytest.raises(InputError, match="verdicts"):
        reweighed((1.0,), (1.0,), (False, False))


@given(
    st.lists(
        st.tuples(st.floats(0.01, 10), st.floats(0, 10), st.sampled_from([True, False, None])),
        min_size=1,
        max_size=6,
    )
)
def test_new_weights_never_all_zero_and_never_revive_a_path(
    paths: list[tuple[float, float, bool | None]],
) -> None:
    shares = [s for s, _, _ in paths]
    current = [c for _, c, _ in paths]
    if not any(c > 0 for c in current):
        current[0] = 1.0
    verdicts = [v for _, _, v in paths]
    new = reweighed(shares, current, verdicts)
    assert any(w > 0 for w in new)
    for weight, old, verdict in zip(new, current, verdicts, strict=True):
        assert weight >= 0
        if old <= 0:
            assert weight == 0 or new == tuple(current)
        if verdict and new != tuple(current):
            assert weight == 0


def test_a_path_is_congested_only_after_lossy_windows_in_a_row() -> None:
    policy = CongestionPolicy(windows=2)
    streaks, judged = confirmed((0, 0, 0), (True, False, None), policy)
    assert (streaks, judged) == ((1, 0, 0), (False, False, None))  # one lossy window: a queue
    streaks, judged = confirmed(streaks, (True, True, None), policy)
    assert (streaks, judged) == ((2, 1, 0), (True, False, None))
    # A window without enough frames to tell keeps the streak; a clean one ends it.
    assert confirmed((1, 1), (None, False), policy) == ((1, 0), (None, False))
    assert confirmed((0,), (True,), CongestionPolicy(windows=1)) == ((1,), (True,))


@given(st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=12), st.integers(1, 4))
def test_congested_exactly_when_the_last_verdicts_were_all_lossy(
    verdicts: list[bool | None], windows: int
) -> None:
    policy = CongestionPolicy(windows=windows)
    streaks: tuple[int, ...] = (0,)
    for verdict in verdicts:
        streaks, (judged,) = confirmed(streaks, (verdict,), policy)
    told = [v for v in verdicts if v is not None]
    expected = None if verdicts[-1] is None else told[-windows:] == [True] * windows
    assert judged == expected
