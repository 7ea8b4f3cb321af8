"""Delivery reports: rates per interval, totals, status; resets never go negative."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.delivery import DeliverySample, DeliveryStatus, delivery_report
from braid.core.errors import InputError

BOOKED = 100_000_000  # 100 Mbit/s
SECOND = BOOKED // 8  # bytes a second at the booked rate


def series(per_interval: list[tuple[float, float]], every: int = 5) -> list[DeliverySample]:
    """Samples whose intervals offer and deliver these shares of the booked rate."""
    samples = [DeliverySample(1000)]
    offered = delivered = 0
    for i, (offer, deliver) in enumerate(per_interval, start=1):
        offered += int(offer * SECOND * every)
        delivered += int(deliver * SECOND * every)
        samples.append(DeliverySample(1000 + i * every, offered, delivered))
    return samples


def test_rates_and_totals_of_a_full_delivery() -> None:
    report = delivery_report(series([(1.0, 1.0)] * 4), BOOKED)
    assert report.status is DeliveryStatus.OK
    assert [i.start for i in report.intervals] == [1000, 1005, 1010, 1015]
    assert all(i.offered_bps == pytest.approx(BOOKED) for i in report.intervals)
    assert all(i.booked_share == pytest.approx(1.0) for i in report.intervals)
    assert report.totals.seconds == 20
    assert report.totals.delivered_bytes == 4 * 5 * SECOND
    assert report.delivered_share == pytest.approx(1.0)


def test_fewer_than_two_samples_measure_nothing() -> None:
    assert delivery_report([], BOOKED).status is DeliveryStatus.UNMEASURED
    only = delivery_report([DeliverySample(5, 10, 10)], BOOKED)
    assert only.status is DeliveryStatus.UNMEASURED
    assert only.delivered_share is None


def test_degraded_needs_the_sustained_window() -> None:
    assert delivery_report(series([(1.2, 0.5)] * 2), BOOKED).status is DeliveryStatus.OK
    assert delivery_report(series([(1.2, 0.5)] * 3), BOOKED).status is DeliveryStatus.DEGRADED
    recovered = series([(1.2, 0.5)] * 3 + [(1.2, 1.0)])
    assert delivery_report(recovered, BOOKED).status is DeliveryStatus.OK
    assert delivery_report(series([(1.2, 0.5)] * 3), BOOKED, sustain=4).status is (
        DeliveryStatus.OK
    )


def test_a_sender_offering_less_is_idle_not_degraded() -> None:
    report = delivery_report(series([(0.5, 0.5)] * 4), BOOKED)
    assert report.status is DeliveryStatus.IDLE
    assert not any(i.short for i in report.intervals)


def test_just_under_the_floor_is_short() -> None:
    report = delivery_report(series([(1.0, 0.94)] * 3), BOOKED)
    assert report.status is DeliveryStatus.DEGRADED
    assert delivery_report(series([(1.0, 0.96)] * 3), BOOKED).status is DeliveryStatus.OK


def test_a_reset_counts_only_since_the_reset() -> None:
    samples = [
        DeliverySample(0, 1_000_000, 1_000_000),
        DeliverySample(5, 2_000_000, 2_000_000),
        DeliverySample(10, 300, 200),  # the switch restarted
    ]
    report = delivery_report(samples, BOOKED)
    last = report.intervals[-1]
    assert last.reset and not report.intervals[0].reset
    assert (last.offered_bps, last.delivered_bps) == (300 * 8 / 5, 200 * 8 / 5)


def test_samples_are_taken_in_time_order() -> None:
    ordered = series([(1.0, 1.0), (1.0, 0.5)])
    assert delivery_report(ordered[::-1], BOOKED) == delivery_report(ordered, BOOKED)


def test_bad_arguments_name_their_field() -> None:
    with pytest.raises(InputError, match=r"^booked_bps"):
        delivery_report([], 0)
    with pytest.raises(InputError, match=r"^floor"):
        delivery_report([], BOOKED, floor=1.5)
    with pytest.raises(InputError, match=r"^sustain"):
        delivery_report([], BOOKED, sustain=0)


def test_a_negative_counter_is_refused() -> None:
    with pytest.raises(InputError) as raised:
        DeliverySample(0, offered_bytes=-1)
    assert raised.value.field == "offered_bytes"


counter = st.integers(0, 10**12)
samples = st.lists(
    st.builds(
        DeliverySample,
        st.integers(0, 10**6),
        counter,
        counter,
        counter,
        counter,
        counter,
        counter,
    ),
    max_size=12,
)


@given(samples, st.integers(1, 10**11))
def test_no_rate_is_negative_and_totals_add_up(found: list[DeliverySample], booked: int) -> None:
    report = delivery_report(found, booked)
    for i in report.intervals:
        assert i.end > i.start
        assert min(i.offered_bps, i.delivered_bps, i.dropped_bps) >= 0
    assert len(report.intervals) == max(0, len({s.at for s in found}) - 1)
    assert report.totals.seconds == sum(i.end - i.start for i in report.intervals)
    spent = sum(i.delivered_bps * (i.end - i.start) / 8 for i in report.intervals)
    assert spent == pytest.approx(report.totals.delivered_bytes)
    if not report.intervals:
        assert report.status is DeliveryStatus.UNMEASURED


@given(st.lists(st.integers(0, 10**9), min_size=2, max_size=10), st.integers(1, 10**9))
def test_growing_counters_total_the_last_minus_the_first(steps: list[int], booked: int) -> None:
    total = 0
    found = []
    for i, step in enumerate(steps):
        total += step
        found.append(DeliverySample(i * 5, total, total))
    report = delivery_report(found, booked)
    assert report.totals.offered_bytes == total - steps[0]
    assert not any(i.reset for i in report.intervals)
