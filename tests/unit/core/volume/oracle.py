"""A brute-force oracle for volume transfers: one LP over the whole time-expanded network.

It shares no flow code with braid: the network's timelines give each link
direction's free capacity between breakpoints, and scipy's HiGHS solves
one linear program with a variable per (link direction, piece of time),
conservation at every node in every piece, each link's capacity in every
piece (a symmetric booking takes what it sends either way from both
directions, as `Network` books it), the total rate cap, and the volume
moved by T as the objective. The earliest completion is found by
bisection over whole seconds, asking the LP each time.
"""

from __future__ import annotations

import math
from functools import reduce
from itertools import pairwise

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from braid.core.model.network import Network
from braid.core.volume import VolumeAsk

# Past every booking nothing changes; the search for a feasible T doubles
# its reach from the last breakpoint at most this many times.
DOUBLINGS = 64


class Oracle:
    """The most a transfer can move by any T, by LP; answers kept per T."""

    def __init__(self, network: Network, ask: VolumeAsk) -> None:
        self.network, self.ask = network, ask
        topology = network.topology
        self.links = [link for link in topology.links.values() if link.up]
        self.nodes = sorted(topology.nodes)
        self.row = {node: i for i, node in enumerate(self.nodes)}
        # One unit for the LP: the largest that divides every capacity, every
        # booking and the rate cap, so every bound is a modest whole number.
        amounts = [link.capacity for link in self.links]
        amounts += [a.bandwidth for b in network.bookings.values() for a in b.allocations]
        amounts += [ask.max_rate] if ask.max_rate is not None else []
        self.unit = reduce(math.gcd, amounts)
        instants = {
            t for tl in network.timelines().values() for t in tl.breakpoints(ask.not_before, 2**62)
        }
        self.breakpoints = sorted(t for t in instants if t > ask.not_before)
        self._known: dict[int, int] = {}

    def pieces(self, until: int) -> list[tuple[int, int]]:
        cuts = [t for t in self.breakpoints if t < until]
        bounds = [self.ask.not_before, *cuts, until]
        return list(pairwise(bounds))

    def most_by(self, until: int) -> int:
        """The most bits that can be moved in [not_before, until)."""
        if until <= self.ask.not_before:
            return 0
        if until not in self._known:
            self._known[until] = self._solve(self.pieces(until))
        return self._known[until]

    def _solve(self, pieces: list[tuple[int, int]]) -> int:
        ask, links, row = self.ask, self.links, self.row
        arcs = 2 * len(links)
        count = arcs * len(pieces)
        eq_rows: list[int] = []
        eq_cols: list[int] = []
        eq_vals: list[float] = []
        ub_rows: list[int] = []
        ub_cols: list[int] = []
        ub_vals: list[float] = []
        upper = np.zeros(count)
        cost = np.zeros(count)
        src, dst = row[ask.src], row[ask.dst]
        for p, (start, end) in enumerate(pieces):
            base = p * arcs
            for j, link in enumerate(links):
                forward = self._free(link.id, True, start, end)
                backward = self._free(link.id, False, start, end)
                for side, (tail, head) in enumerate(((link.a, link.b), (link.b, link.a))):
                    col = base + 2 * j + side
                    for node, sign in ((tail, -1.0), (head, 1.0)):
                        at = row[node]
                        if at == src:
                            cost[col] += sign * (end - start)  # minus the volume sent
                            if ask.max_rate is not None:
                                ub_rows.append(p)
                                ub_cols.append(col)
                                ub_vals.append(-sign)
                        elif at != dst:
                            eq_rows.append(p * len(self.nodes) + at)
                            eq_cols.append(col)
                            eq_vals.append(sign)
                if ask.symmetric:
                    both = min(forward, backward)
                    upper[base + 2 * j] = upper[base + 2 * j + 1] = both
                    ub_rows += [len(pieces) + p * len(links) + j] * 2
                    ub_cols += [base + 2 * j, base + 2 * j + 1]
                    ub_vals += [1.0, 1.0]
                else:
                    upper[base + 2 * j], upper[base + 2 * j + 1] = forward, backward
        ub_count = len(pieces) + len(pieces) * len(links)
        ub_rhs = np.zeros(ub_count)
        ub_rhs[: len(pieces)] = (ask.max_rate or 0) / self.unit
        for p in range(len(pieces)):
            for j in range(len(links)):
                ub_rhs[len(pieces) + p * len(links) + j] = upper[p * arcs + 2 * j]
        eq = coo_matrix((eq_vals, (eq_rows, eq_cols)), shape=(len(pieces) * len(self.nodes), count))
        ub = coo_matrix((ub_vals, (ub_rows, ub_cols)), shape=(ub_count, count))
        result = linprog(
            cost,
            A_ub=ub.tocsr(),
            b_ub=ub_rhs,
            A_eq=eq.tocsr(),
            b_eq=np.zeros(len(pieces) * len(self.nodes)),
            bounds=np.column_stack((np.zeros(count), upper)),
            method="highs",
        )
        assert result.status == 0, result.message
        moved = float(-result.fun)
        whole = round(moved)
        assert abs(moved - whole) < 1e-4 * max(1.0, abs(moved)) ** 0.5, moved
        return whole * self.unit

    def _free(self, link: str, forward: bool, start: int, end: int) -> float:
        free = self.network.timeline(link, forward).free(start, end)
        assert free % self.unit == 0
        return free / self.unit

    def earliest(self) -> int | None:
        """The least whole second T with most_by(T) >= bits, or None if there is none."""
        bits, lo = self.ask.bits, self.ask.not_before
        last = max(self.breakpoints, default=lo)
        hi = last + 1
        if self.most_by(hi) < bits:
            if self.most_by(hi) == self.most_by(last):
                return None  # nothing moves past the last breakpoint, and never will
            reach = 1
            for _ in range(DOUBLINGS):
                if self.most_by(hi) >= bits:
                    break
                lo, hi, reach = hi, hi + reach, 2 * reach
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.most_by(mid) >= bits:
                hi = mid
            else:
                lo = mid
        return hi
