"""Probe-stream timing: when traffic took the other path, and the longest gap."""

from __future__ import annotations

from braid.adapters.emulation.probe import ProbeTrace
from braid.emulation.failover.measure import moved_back, moved_early, outage_ms, through_after


def _stream(delays_ms: list[float], lost: frozenset[int] = frozenset()) -> ProbeTrace:
    """One packet a millisecond from t = 0, each with its one-way delay."""
    arrivals = tuple(
        (k, k / 1000, k / 1000 + d / 1000) for k, d in enumerate(delays_ms) if k not in lost
    )
    return ProbeTrace(len(delays_ms), 0.0, 1000, arrivals)


def test_traffic_moves_back_after_the_last_slow_packet() -> None:
    # fast until 100 ms, slow (80 ms) for 150 ms, fast again from 250 ms; a second event at 1 s
    # whose traffic never went slow
    delays = [4.0] * 100 + [80.0] * 150 + [4.0] * 1750
    moved = moved_back(_stream(delays), [0.1, 1.0], split_ms=40, within=0.5)
    assert moved[0] is not None and abs(moved[0] - 0.15) < 1e-9
    assert moved[1] is None


def test_after_a_cut_the_first_packet_through_took_the_other_path() -> None:
    # a cut at 0.1 s: nothing sent from 0.1 s arrives until 0.23 s; a second cut at 1.0 s
    # that nothing ever got round (lost to the end of the stream)
    trace = _stream([4.0] * 2000, lost=frozenset(range(100, 230)) | frozenset(range(1000, 2000)))
    moved = through_after(trace, [0.1, 1.0], within=0.5)
    assert moved[0] is not None and abs(moved[0] - 0.13) < 1e-9
    assert moved[1] is None
    # already through at the event (a site that had moved before): zero
    assert through_after(trace, [0.05], within=0.5) == [0.0]


def test_a_fail_over_between_the_put_back_and_the_event_found_the_site_moved() -> None:
    # events at 10, 20, 30 s, sites put back 5 s after each; fail-overs at 10.1 (the
    # first event's), 16 (after the put-back at 15: early for the event at 20), 25.5 (after
    # the put-back at 25: early for 30), and one at 3 s, before the first event
    early = moved_early([3.0, 10.1, 16.0, 25.5], [10.0, 20.0, 30.0], put_back=5.0)
    assert early == [True, True, True]
    assert moved_early([10.1, 20.2, 30.05], [10.0, 20.0, 30.0], put_back=5.0) == [False] * 3


def test_longest_gap_in_the_stream() -> None:
    trace = _stream([4.0] * 1000, lost=frozenset(range(500, 512)) | {700})
    assert outage_ms(trace, 0.4, 0.8) == 12.0
    assert outage_ms(trace, 0.0, 0.4) == 0.0
