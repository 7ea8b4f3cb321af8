"""The path watch re-weighs a congested path from two fake edges' counters (no braid-dp)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from braid.adapters.dataplane.edge_protocol import EdgeCounters, PathCounters, ToHostCounters
from braid.adapters.dataplane.path_watch import PathWatch
from braid.core.rules.packet_split import EdgeSide
from braid.core.rules.reseq_sizing import ReseqSizing

VLANS = (101, 102)
SIZING = ReseqSizing(64, 32, 20, 50.0, 30.0, "declared")


class FakeEdge:
    """An edge whose counters the test sets, and which remembers the weights it was given."""

    def __init__(self) -> None:
        self.sent = dict.fromkeys(VLANS, 0)
        self.arrived = dict.fromkeys(VLANS, 0)
        self.weights: list[tuple[str, tuple[float, ...]]] = []

    def counters(self) -> EdgeCounters:
        paths = tuple(PathCounters(v, 0.5, n) for v, n in self.sent.items())
        to_host = ToHostCounters(**{f.name: 0 for f in fields(ToHostCounters)})
        return EdgeCounters({"r1": paths}, {}, to_host, dict(self.arrived))

    def set_weights(self, reservation: str, weights: Sequence[float]) -> dict[str, object]:
        self.weights.append((reservation, tuple(weights)))
        return {"ok": True}


def _side(host: str) -> EdgeSide:
    return EdgeSide(host, "r1", "10.0.0.1", "10.0.0.2", VLANS, (0.5, 0.5), 1, False, SIZING)


def test_the_congested_direction_loses_its_path_and_the_other_keeps_both() -> None:
    a, b = FakeEdge(), FakeEdge()
    watch = PathWatch({"h1": a, "h2": b}, [_side("h1"), _side("h2")], clock=lambda: 7.0)
    watch.begin()
    # h1 -> h2: path 101 delivers 20 of 100 in each of two windows, path 102 all it is
    # given; h2 -> h1 (ACKs) all fine. One lossy window is not enough (a queue filling).
    a.sent, b.arrived = {101: 100, 102: 100}, {101: 20, 102: 100}
    b.sent, a.arrived = {101: 50, 102: 50}, {101: 50, 102: 50}
    watch.poll()
    assert a.weights == [] and watch.changes == []
    a.sent, b.arrived = {101: 200, 102: 200}, {101: 40, 102: 200}
    watch.poll()
    assert a.weights == [("r1", (0.0, 1.0))]
    assert b.weights == []
    [change] = watch.changes
    assert (change.at, change.host, change.weights) == (7.0, "h1", (0.0, 1.0))
    assert change.loss == (0.8, 0.0)
    # Nothing more goes on path 101, so it stays at 0; the next window changes nothing.
    a.sent, b.arrived = {101: 200, 102: 400}, {101: 40, 102: 400}
    watch.poll()
    assert len(a.weights) == 1


def test_one_lossy_window_between_clean_ones_changes_nothing() -> None:
    a, b = FakeEdge(), FakeEdge()
    watch = PathWatch({"h1": a, "h2": b}, [_side("h1"), _side("h2")])
    watch.begin()
    for sent, arrived in ((100, 60), (200, 160), (300, 200), (400, 300)):
        a.sent, b.arrived = {101: sent, 102: sent}, {101: arrived, 102: sent}
        watch.poll()  # 40 % lost, none, 60 % lost, none: never twice in a row
    assert a.weights == [] and watch.changes == []
    assert watch.errors == []


def test_an_edge_that_fails_is_reported_and_the_other_direction_still_watched() -> None:
    class Broken(FakeEdge):
        def counters(self) -> EdgeCounters:
            raise RuntimeError("braid-dp exited")

    a, b = FakeEdge(), FakeEdge()
    watch = PathWatch({"h1": a, "h2": b}, [_side("h1"), _side("h2")])
    watch.begin()
    watch.directions[0].receiver = Broken()
    b.sent, a.arrived = {101: 100, 102: 100}, {101: 10, 102: 100}
    watch.poll()
    b.sent, a.arrived = {101: 200, 102: 200}, {101: 20, 102: 200}
    watch.poll()
    assert watch.errors == ["h1: braid-dp exited"] * 2
    assert b.weights == [("r1", (0.0, 1.0))]
