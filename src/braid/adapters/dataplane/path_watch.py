"""Watch a packet-split reservation's paths from its two edges and re-weigh a congested one.

MPSDN's controller (seed 002, §IV-A4) polls the switches every 2 seconds,
and when a path has no capacity left recomputes the round-robin weights so
that the flow continues on the others. Here the poll reads both edges'
counters: for each direction, what the sending edge put on each path
against what the receiving edge took off it (`core.multipath.congestion`
decides, over two windows in a row by default), and a congested path's
weight goes to 0 at the sending edge.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from braid.adapters.dataplane.edge_protocol import EdgeCounters
from braid.core.multipath.congestion import (
    CongestionPolicy,
    PathCounts,
    confirmed,
    reweighed,
    window_verdicts,
)
from braid.core.rules.packet_split import EdgeSide

__all__ = ["EdgeControl", "PathWatch", "WeightChange"]


class EdgeControl(Protocol):
    """What the watch needs of an edge (`MultipathEdge` has it)."""

    def counters(self) -> EdgeCounters: ...

    def set_weights(self, reservation: str, weights: Sequence[float]) -> dict[str, object]: ...


@dataclass(frozen=True, slots=True)
class WeightChange:
    """At `at` (the watch's clock), the edge at `host` got `weights`; `loss` per path over
    the window that decided it (None: no verdict on that path)."""

    at: float
    host: str
    weights: tuple[float, ...]
    loss: tuple[float | None, ...]


@dataclass
class _Direction:
    side: EdgeSide  # the sending side
    sender: EdgeControl
    receiver: EdgeControl
    weights: tuple[float, ...]
    base: tuple[PathCounts, ...] = ()
    streaks: tuple[int, ...] = ()  # per path, lossy windows in a row
    changes: list[WeightChange] = field(default_factory=list)

    def counts(self) -> tuple[PathCounts, ...]:
        sent = self.sender.counters().sent_by_vlan()
        arrived = self.receiver.counters().arrived
        return tuple(PathCounts(sent.get(v, 0), arrived.get(v, 0)) for v in self.side.vlans)


class PathWatch:
    """Started with `with PathWatch(edges, sides):`; every `period` seconds each direction
    is judged and re-weighed. `changes` lists what it did."""

    def __init__(
        self,
        edges: Mapping[str, EdgeControl],
        sides: Sequence[EdgeSide],
        *,
        policy: CongestionPolicy | None = None,
        period: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if len(sides) != 2:
            raise ValueError("sides: a packet-split reservation has two edges")
        a, b = sides
        self.directions = [
            _Direction(a, edges[a.host], edges[b.host], a.weights),
            _Direction(b, edges[b.host], edges[a.host], b.weights),
        ]
        self.policy = policy or CongestionPolicy()
        self.period = period
        self.clock = clock
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="path-watch", daemon=True)

    @property
    def changes(self) -> list[WeightChange]:
        return sorted((c for d in self.directions for c in d.changes), key=lambda c: c.at)

    def begin(self) -> None:
        """The first window starts now (`with` does it, before the thread)."""
        for direction in self.directions:
            direction.base = direction.counts()
            direction.streaks = (0,) * len(direction.base)

    def __enter__(self) -> PathWatch:
        self.begin()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.poll()

    def poll(self) -> None:
        """One window's end: judge and re-weigh both directions."""
        for direction in self.directions:
            try:
                self._judge(direction)
            except Exception as error:  # an edge gone: say so, keep watching the other
                self.errors.append(f"{direction.side.host}: {error}")

    def _judge(self, direction: _Direction) -> None:
        now = direction.counts()
        verdicts = window_verdicts(direction.base, now, self.policy)
        loss = tuple(
            None if v is None else round(1 - min(n.arrived - b.arrived, n.sent - b.sent)
                                         / max(n.sent - b.sent, 1), 3)
            for v, b, n in zip(verdicts, direction.base, now, strict=True)
        )  # fmt: skip
        direction.base = tuple(
            b if v is None else n for v, b, n in zip(verdicts, direction.base, now, strict=True)
        )
        direction.streaks, judged = confirmed(direction.streaks, verdicts, self.policy)
        weights = reweighed(direction.side.weights, direction.weights, judged)
        if weights != direction.weights:
            direction.sender.set_weights(direction.side.reservation_id, weights)
            direction.weights = weights
            direction.changes.append(WeightChange(self.clock(), direction.side.host, weights, loss))
