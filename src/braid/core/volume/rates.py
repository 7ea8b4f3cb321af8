"""The best rate of each piece of time: its max flow, over at most k paths, capped.

A piece's free capacities are constant (see `sweep`), so what a transfer
can send through it is a max flow. Most consecutive pieces differ by a
booking starting or ending on a link or two, so a piece's rate is mostly
known without running a flow:

- the previous piece's allocation still fits (only the changed links are
  read) and a minimum cut of its flow is no wider now: no flow does better,
  as every flow crosses every cut; or it fits and already sends `max_rate`;
- or the pair's chains have the same widths as in an earlier piece: the
  flow, and any allocation found for it, depend on nothing else (a simple
  path between the ends crosses every link of a chain it enters).

Otherwise Dinic runs on the piece and its flow is decomposed; if the
decomposition needs more than `max_paths` paths, the k-path highest
bandwidth search (`multipath.select.most_bandwidth`, the widest path for
one path) gives the piece's rate instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from braid.core.graph.search import widest_path
from braid.core.model.booking import Allocation
from braid.core.model.network import Network, WindowView
from braid.core.model.paths import Path
from braid.core.model.topology import Hop
from braid.core.multipath.chains import Skeleton
from braid.core.multipath.decompose import FlowPath
from braid.core.multipath.maxflow import MaxFlow, Usable, max_flow
from braid.core.multipath.mdi import DEFAULT_POLICY
from braid.core.multipath.plan import Gate
from braid.core.multipath.select import most_bandwidth
from braid.core.volume.ask import VolumeAsk
from braid.core.volume.sweep import Key

__all__ = ["Rate", "Rates", "capped"]


@dataclass(frozen=True, slots=True)
class Rate:
    """What a piece carries: `total` bit/s over `allocations`.

    `cut` is a minimum cut of the piece's max flow (chain indices of the
    pair's skeleton) when `total` is that max flow; `at_cap` when `total`
    is the ask's `max_rate`. Either proves the rate best while it holds.
    """

    total: int
    allocations: tuple[Allocation, ...]
    loads: Mapping[Key, int]
    cut: frozenset[int] | None
    at_cap: bool


class Rates:
    """The rate of each piece of one ask, read from a sweep's free capacities."""

    def __init__(self, network: Network, ask: VolumeAsk, free: Mapping[Key, int]) -> None:
        self.network, self.ask, self.free = network, ask, free
        topology = network.topology
        self.skeleton = skeleton = Skeleton.of(topology, (ask.src, ask.dst))
        self.gate = Gate(topology, "flow", DEFAULT_POLICY)
        self.chain_keys = [tuple(map(self._key, hops)) for _, _, hops in skeleton.chains]
        self.chains_of: dict[Key, list[int]] = defaultdict(list)
        for k, keys in enumerate(self.chain_keys):
            for key in set(keys):
                self.chains_of[key].append(k)
        self.reverse = [_reverse(skeleton, hops) for _, _, hops in skeleton.chains]
        self.widths = [0] * len(skeleton.chains)
        self.memo: dict[tuple[int, ...], Rate] = {}
        self.current: Rate | None = None
        self.flows_run = 0  # how many pieces needed a max flow (for benchmarks)

    @property
    def links(self) -> set[str]:
        """The links a flow between the ends can use: the sweep watches these."""
        return {hop.link for hop in self.skeleton.reads}

    def _key(self, hop: Hop) -> Key:
        return hop.link if self.ask.symmetric else (hop.link, hop.forward)

    def rate(self, start: int, end: int, changed: set[Key]) -> Rate:
        """The rate of [start, end), whose free capacities changed on `changed` alone."""
        dirty: set[int] = set()
        for key in changed:
            dirty.update(self.chains_of.get(key, ()))
        free, widths = self.free, self.widths
        for k in dirty:
            widths[k] = min(free[key] for key in self.chain_keys[k])
        current = self.current
        if current is not None and self._still_best(current, changed, dirty):
            return current
        shape = tuple(widths)
        found = self.memo.get(shape)
        if found is None:
            found = self.memo[shape] = self._solve(start, end)
        self.current = found
        return found

    def _still_best(self, rate: Rate, changed: set[Key], dirty: set[int]) -> bool:
        free, loads = self.free, rate.loads
        if any(loads.get(key, 0) > free[key] for key in changed):
            return False
        if rate.at_cap:
            return True
        if rate.cut is None:
            return False
        return rate.cut.isdisjoint(dirty) or self._cut_width(rate.cut) <= rate.total

    def _cut_width(self, cut: Iterable[int]) -> int:
        widths = self.widths
        return sum(max(widths[k], 0) for k in cut)

    def _solve(self, start: int, end: int) -> Rate:
        self.flows_run += 1
        ask, topology = self.ask, self.network.topology
        usable = self._usable(start, end)
        flow = max_flow(topology, ask.src, ask.dst, usable, symmetric=False)
        target = flow.value if ask.max_rate is None else min(flow.value, ask.max_rate)
        parts: tuple[FlowPath, ...] = ()
        if target > 0:
            parts = flow.first_paths(ask.max_paths)
            if sum(p.amount for p in parts) < target:
                parts = self._k_paths(start, end, usable, flow)
        allocations = capped(((p.path, p.amount) for p in parts), target)
        total = sum(a.bandwidth for a in allocations)
        cut = self._cut(flow) if total == flow.value else None
        at_cap = ask.max_rate is not None and total == ask.max_rate
        return Rate(total, allocations, self._loads(allocations), cut, at_cap)

    def _k_paths(self, start: int, end: int, usable: Usable, flow: MaxFlow) -> tuple[FlowPath, ...]:
        """The most over at most k paths when the flow needs more (widest path for one)."""
        ask, network = self.ask, self.network
        if ask.max_paths == 1:
            widest = widest_path(network.topology, ask.src, ask.dst, usable)
            return () if widest is None else (FlowPath(*widest),)
        view = WindowView(network, start, end, ask.symmetric)
        return most_bandwidth(view, ask.src, ask.dst, ask.max_paths, flow, self.gate)

    def _usable(self, start: int, end: int) -> Usable:
        """Free capacity per hop: the sweep's on the pair's links, the timelines' elsewhere."""
        free, network, symmetric = self.free, self.network, self.ask.symmetric
        read: dict[Key, int] = {}

        def usable(hop: Hop) -> int:
            key = self._key(hop)
            found = free.get(key, read.get(key))
            if found is None:
                sides = (True, False) if symmetric else (hop.forward,)
                found = read[key] = min(
                    network.timeline(hop.link, side).free(start, end) for side in sides
                )
            return found

        return usable

    def _cut(self, flow: MaxFlow) -> frozenset[int] | None:
        """The chains leaving the nodes src reaches in the flow's residual graph.

        A chain's residual room is its width less its flow, plus the flow
        the chain the other way carries (pushing back cancels it).
        """
        chains, index = self.skeleton.chains, self.skeleton.index
        carried = [flow.flows.get((hops[0].link, hops[0].forward), 0) for _, _, hops in chains]
        leaving: dict[int, list[int]] = defaultdict(list)
        for k, (tail, _, _) in enumerate(chains):
            leaving[tail].append(k)
        reached, queue = {index[self.ask.src]}, [index[self.ask.src]]
        for node in queue:
            for k in leaving[node]:
                back = self.reverse[k]
                room = self.widths[k] - carried[k] + (carried[back] if back >= 0 else 0)
                head = chains[k][1]
                if room > 0 and head not in reached:
                    reached.add(head)
                    queue.append(head)
        cut = frozenset(
            k for k, (t, h, _) in enumerate(chains) if t in reached and h not in reached
        )
        return cut if self._cut_width(cut) == flow.value else None

    def _loads(self, allocations: Iterable[Allocation]) -> dict[Key, int]:
        out: dict[Key, int] = defaultdict(int)
        topology, symmetric = self.network.topology, self.ask.symmetric
        for allocation in allocations:
            for link, forward in allocation.path.directions(topology):
                out[link if symmetric else (link, forward)] += allocation.bandwidth
        return dict(out)


def capped(parts: Iterable[tuple[Path, int]], target: int) -> tuple[Allocation, ...]:
    """The first parts, in order, up to `target` in all (the last one cut short).

    Taking less on a path than a feasible set of paths carries stays
    feasible, and the widest parts first keeps the paths few.
    """
    out: list[Allocation] = []
    left = target
    for path, amount in parts:
        if left <= 0:
            break
        share = min(amount, left)
        if share > 0:
            out.append(Allocation(path, share))
            left -= share
    return tuple(out)


def _reverse(skeleton: Skeleton, hops: tuple[Hop, ...]) -> int:
    """The chain running the other way over the same links, or -1 (none in the skeleton)."""
    last = hops[-1]
    arc = skeleton.arc_of.get((last.link, not last.forward))
    return arc >> 1 if arc is not None else -1
