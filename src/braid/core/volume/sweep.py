"""The free capacity of a pair's links over time, one constant piece after another.

Every link's booked level is a step function, so the free capacity of any
set of links is constant between the instants at which one of them changes.
The sweep merges those instants (lazily: an earliest transfer stops reading
at its completion) and keeps the free capacity of each link current, with
the keys that changed at each piece's start, so the rates of consecutive
pieces can be worked out from what changed alone.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator

from braid.core.model.network import Network
from braid.core.model.units import FOREVER

__all__ = ["FOREVER", "Key", "Piece", "Sweep"]

# A link in a symmetric sweep (both directions give the less free one), a
# link direction in a directional one.
Key = str | tuple[str, bool]
Piece = tuple[int, int, set[Key]]  # [start, end), and the keys whose free capacity changed


class Sweep:
    """Free capacity of `links` from `start` on; `free` holds the current piece's."""

    def __init__(self, network: Network, links: Iterable[str], start: int, symmetric: bool) -> None:
        self.network, self.start, self.symmetric = network, start, symmetric
        # The timelines read: (key, forward). A symmetric key on a link
        # without one-way bookings reads its a -> b timeline only (both hold
        # the same levels); otherwise both, and takes the higher level.
        self._watched: list[tuple[Key, bool]] = []
        for link in sorted(set(links)):
            if not symmetric:
                self._watched += [((link, True), True), ((link, False), False)]
            elif network.one_way.get(link):
                self._watched += [(link, True), (link, False)]
            else:
                self._watched.append((link, True))
        self._levels = [0] * len(self._watched)
        self._sides: dict[Key, list[int]] = {}
        for row, (key, _) in enumerate(self._watched):
            self._sides.setdefault(key, []).append(row)
        self.free: dict[Key, int] = {}

    def _capacity(self, key: Key) -> int:
        link = key if isinstance(key, str) else key[0]
        return self.network.topology.links[link].capacity

    def _changes(self) -> Iterator[tuple[int, int, int]]:
        """(instant, row, level) for every level change of every watched timeline, in time order."""
        network, start = self.network, self.start
        streams = [
            _tagged(network.timeline(_link(key), ahead).steps(start, FOREVER), row)
            for row, (key, ahead) in enumerate(self._watched)
        ]
        return heapq.merge(*streams)

    def pieces(self) -> Iterator[Piece]:
        """Each piece [a, b) over which nothing watched changes, from `start` to FOREVER."""
        if not self._watched:  # no link joins the ends: nothing is ever free between them
            yield self.start, FOREVER, set()
            return
        changes = self._changes()
        pending = next(changes, None)
        levels, free = self._levels, self.free
        while pending is not None:
            here = pending[0]
            touched: set[Key] = set()
            while pending is not None and pending[0] == here:
                _, row, level = pending
                levels[row] = level
                touched.add(self._watched[row][0])
                pending = next(changes, None)
            changed: set[Key] = set()
            for key in touched:
                now = self._capacity(key) - max(levels[row] for row in self._sides[key])
                if free.get(key) != now:
                    free[key] = now
                    changed.add(key)
            yield here, (pending[0] if pending is not None else FOREVER), changed


def _tagged(steps: Iterator[tuple[int, int, int]], row: int) -> Iterator[tuple[int, int, int]]:
    for start, _, level in steps:
        yield start, row, level


def _link(key: Key) -> str:
    return key if isinstance(key, str) else key[0]
