"""The OSCARS way: Yen's k shortest paths, each checked by sweeping reservation rows.

No timeline is pre-built. Reservations are rows (start, end, bandwidth) kept
per link direction, sorted by start, as a table with an index on
(link, start) would hold them; to check a path for a window, the rows of each
of its links that overlap the window are read and their start/end events
swept to find the peak booked. This is how a reservation system that stores
reservations in a database answers, and it is deliberately not a strawman:
the index plus each link's longest booking bound the rows read to those near
the window.

Everything here is independent of braid's timelines and searches, so that
it can also check braid's answers.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from braid.core.model.network import Network
from braid.core.model.topology import Topology

Direction = tuple[str, bool]
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class KPath:
    """A path as the directions it crosses; `nodes` only for reports."""

    nodes: tuple[str, ...]
    links: tuple[str, ...]
    directions: tuple[Direction, ...]
    latency: float


# -- Yen's k shortest loopless paths on the multigraph -----------------------


def _dijkstra(
    topology: Topology,
    src: str,
    dst: str,
    banned_nodes: set[str],
    banned_links: set[str],
) -> tuple[float, list[tuple[str, str, bool]]] | None:
    """Lowest-latency src->dst path avoiding the banned; hops as (link, to, forward)."""
    best: dict[str, float] = {src: 0.0}
    came: dict[str, tuple[str, tuple[str, str, bool]]] = {}
    heap: list[tuple[float, int, str]] = [(0.0, 0, src)]
    done: set[str] = set()
    while heap:
        dist, count, node = heapq.heappop(heap)
        if node in done:
            continue
        if node == dst:
            hops = []
            while node != src:
                node, step = came[node]
                hops.append(step)
            return dist, hops[::-1]
        done.add(node)
        for hop in topology.hops(node):
            if hop.to in done or hop.to in banned_nodes or hop.link in banned_links:
                continue
            new = dist + topology.links[hop.link].latency_ms
            if new < best.get(hop.to, float("inf")):
                best[hop.to] = new
                came[hop.to] = (node, (hop.link, hop.to, hop.forward))
                heapq.heappush(heap, (new, count + 1, hop.to))
    return None


def _kpath(topology: Topology, src: str, hops: Sequence[tuple[str, str, bool]]) -> KPath:
    nodes = (src, *(to for _, to, _ in hops))
    links = tuple(link for link, _, _ in hops)
    latency = sum(topology.links[link].latency_ms for link in links)
    return KPath(nodes, links, tuple((link, fwd) for link, _, fwd in hops), latency)


def yen_k_shortest(topology: Topology, src: str, dst: str, k: int) -> list[KPath]:
    """Up to k simple paths in order of latency; parallel links give distinct paths."""
    first = _dijkstra(topology, src, dst, set(), set())
    if first is None:
        return []
    accepted = [_kpath(topology, src, first[1])]
    hops_of = [first[1]]
    seen = {accepted[0].links}
    candidates: list[tuple[float, int, tuple[tuple[str, str, bool], ...]]] = []
    serial = 0
    while len(accepted) < k:
        last = hops_of[-1]
        for i in range(len(last)):
            root = last[:i]
            spur_node = accepted[-1].nodes[i]
            banned_links = {h[i][0] for h in hops_of if h[:i] == root}
            banned_nodes = set(accepted[-1].nodes[:i])
            spur = _dijkstra(topology, spur_node, dst, banned_nodes, banned_links)
            if spur is None:
                continue
            whole = tuple(root) + tuple(spur[1])
            links = tuple(h[0] for h in whole)
            if links in seen:
                continue
            seen.add(links)
            latency = sum(topology.links[link].latency_ms for link in links)
            heapq.heappush(candidates, (latency, serial, whole))
            serial += 1
        if not candidates:
            break
        _, _, best = heapq.heappop(candidates)
        hops_of.append(list(best))
        accepted.append(_kpath(topology, src, best))
    return accepted


# -- reservations as rows, checked by sweeping -------------------------------


class Rows:
    """Each link direction's bookings as rows sorted by start (an index on (link, start))."""

    def __init__(self, network: Network) -> None:
        raw: dict[Direction, list[tuple[int, int, int]]] = defaultdict(list)
        topology = network.topology
        for booking in network.bookings.values():
            for alloc in booking.allocations:
                for here, link in zip(alloc.path.nodes, alloc.path.links, strict=False):
                    forward = topology.links[link].a == here
                    raw[(link, forward)].append((booking.start, booking.end, alloc.bandwidth))
                    if booking.symmetric:
                        raw[(link, not forward)].append(
                            (booking.start, booking.end, alloc.bandwidth)
                        )
        self.capacity = {link.id: link.capacity for link in topology.links.values()}
        self.rows = {key: sorted(rows) for key, rows in raw.items()}
        self.starts = {key: [r[0] for r in rows] for key, rows in self.rows.items()}
        # The longest booking on a link bounds how far back an overlapping row can start.
        self.longest = {key: max(r[1] - r[0] for r in rows) for key, rows in self.rows.items()}

    def overlapping(self, key: Direction, start: int, end: int) -> list[tuple[int, int, int]]:
        """Rows on `key` that overlap [start, end): start < end_q and end > start_q."""
        rows = self.rows.get(key)
        if not rows:
            return []
        starts = self.starts[key]
        lo = bisect_right(starts, start - self.longest[key])
        hi = bisect_left(starts, end)
        return [r for r in rows[lo:hi] if r[1] > start]

    def peak(self, key: Direction, start: int, end: int) -> int:
        """Highest booked level in [start, end): sweep the overlapping rows' events."""
        events: list[tuple[int, int]] = []
        for s, e, bw in self.overlapping(key, start, end):
            events.append((max(s, start), bw))
            if e < end:
                events.append((e, -bw))
        events.sort()  # ends sort before starts at one instant: (t, -bw) < (t, +bw)
        level = peak = 0
        for _, delta in events:
            level += delta
            peak = max(peak, level)
        return peak

    def free(self, key: Direction, start: int, end: int) -> int:
        return self.capacity[key[0]] - self.peak(key, start, end)

    def path_free(self, path: KPath, start: int, end: int, symmetric: bool = True) -> int:
        """Bottleneck of `path` in [start, end), both directions when symmetric."""
        out = None
        for link, forward in path.directions:
            free = self.free((link, forward), start, end)
            if symmetric:
                free = min(free, self.free((link, not forward), start, end))
            out = free if out is None else min(out, free)
        return 0 if out is None else out

    def fits(self, path: KPath, need: int, start: int, end: int, symmetric: bool = True) -> bool:
        for link, forward in path.directions:
            keys = ((link, forward), (link, not forward)) if symmetric else ((link, forward),)
            for key in keys:
                if self.capacity[link] - self.peak(key, start, end) < need:
                    return False
        return True

    def loads_fit(self, loads: dict[Direction, int], start: int, end: int) -> bool:
        """Whether extra per-direction `loads` fit in [start, end) (checks braid's plans)."""
        return all(self.free(key, start, end) >= load for key, load in loads.items())

    def events_on(self, paths: Iterable[KPath]) -> list[tuple[int, int, int]]:
        """All rows on the directions of `paths` (both ways), deduplicated."""
        keys = {(link, way) for p in paths for link, _ in p.directions for way in (True, False)}
        out: set[tuple[int, int, int]] = set()
        for key in keys:
            out.update(self.rows.get(key, ()))
        return sorted(out)


# -- the four queries, the OSCARS way -----------------------------------------


def fixed(rows: Rows, paths: Sequence[KPath], need: int, start: int, end: int) -> KPath | None:
    """First candidate, in latency order, with `need` free throughout the window."""
    for path in paths:
        if rows.fits(path, need, start, end):
            return path
    return None


def widest(rows: Rows, paths: Sequence[KPath], start: int, end: int) -> int:
    """Best bottleneck over the candidates (0 when none has room)."""
    return max((rows.path_free(p, start, end) for p in paths), default=0)


def earliest(
    rows: Rows, paths: Sequence[KPath], need: int, duration: int, not_before: int
) -> int | None:
    """Try not_before, then every booking end after it, ascending, against every candidate.

    A path's feasible starts only begin where a booking ends, so these
    candidate instants are exact for the k paths. The last one leaves the
    paths empty, so the search ends there.
    """
    if not paths or max(_path_capacity(rows, p) for p in paths) < need:
        return None
    ends = sorted({e for _, e, _ in rows.events_on(paths) if e > not_before})
    for start in (not_before, *ends):
        for path in paths:
            if rows.fits(path, need, start, start + duration):
                return start
    return None


def all_slots(
    rows: Rows, paths: Sequence[KPath], need: int, duration: int, lo: int, hi: int
) -> list[Span]:
    """Start instants in [lo, hi) at which some candidate carries `need` for `duration`.

    Feasibility of a start can only change where a booking ends (s = end) or
    where the window starts to cover a booking (s = start - duration + 1), so
    each path is checked once per such instant and the result holds until the
    next one.
    """
    spans: list[Span] = []
    for path in paths:
        if _path_capacity(rows, path) < need:
            continue
        marks = {lo}
        for s, e, _ in rows.events_on([path]):
            marks.update(t for t in (e, s - duration + 1) if lo < t < hi)
        ordered = sorted(marks)
        for t, after in zip(ordered, [*ordered[1:], hi], strict=True):
            if rows.fits(path, need, t, t + duration):
                spans.append((t, after))
    return merge(spans)


def merge(spans: Iterable[Span]) -> list[Span]:
    """Union of half-open spans as sorted, disjoint, non-touching spans."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _path_capacity(rows: Rows, path: KPath) -> int:
    return min(rows.capacity[link] for link in path.links)
