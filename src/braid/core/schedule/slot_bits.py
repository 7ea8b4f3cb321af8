"""ALL-SLOTS over interval sets coded as bit sets, exactly.

The Bellman-Ford of `all_slots` unites and intersects sets of start times
many thousand times per query. Every such set here is a union of pieces
between consecutive *cut points*: the ends of every link's blocked starts in
the window. Between two cut points no link's feasibility changes, so each
set is exactly a set of pieces, coded as the bits of a Python int (bit i is
[cuts[i], cuts[i + 1])); union, intersection and difference become `|`, `&`
and `& ~`, done in C over machine words. No instant is rounded: the cut
points are the exact ends of the blocked spans.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping

from braid.core.graph.reach import hop_counts, relevant_nodes
from braid.core.model.intervals import IntervalSet, Span
from braid.core.model.network import Network
from braid.core.model.topology import Hop, Link, Topology

_Key = str | tuple[str, bool]
_RUN = re.compile("1+")


class SlotBits:
    """Feasible starts of every hop in [lo, hi), as bit sets over shared cut points."""

    def __init__(
        self,
        network: Network,
        need: int,
        duration: int,
        window: tuple[int, int],
        symmetric: bool,
        relevant: set[str] | None,
    ) -> None:
        self.symmetric = symmetric
        lo, hi = window
        links = network.topology.links
        if relevant is not None:
            # Links into dead ends carry no path between the ends: not scanned.
            links = {k: v for k, v in links.items() if v.a in relevant and v.b in relevant}
        blocked = _blocked_spans(network, links, need, duration, lo, hi, symmetric)
        edges = {lo, hi}
        for spans in blocked.values():
            for start, end in spans:
                edges.add(start)
                edges.add(end)
        self.cuts = sorted(edges)
        rank = {cut: i for i, cut in enumerate(self.cuts)}
        self.full = (1 << (len(self.cuts) - 1)) - 1
        self.masks: dict[_Key, int] = {}
        for key, spans in blocked.items():
            mask = 0
            for start, end in spans:
                mask |= (1 << rank[end]) - (1 << rank[start])
            self.masks[key] = self.full & ~mask

    def of(self, hop: Hop) -> int:
        key: _Key = hop.link if self.symmetric else (hop.link, hop.forward)
        return self.masks.get(key, self.full)

    def spans(self, bits: int) -> IntervalSet:
        """The instants a bit set stands for, as an interval set."""
        cuts = self.cuts
        text = format(bits, "b")[::-1]  # bit i is character i
        return IntervalSet(tuple((cuts[m.start()], cuts[m.end()]) for m in _RUN.finditer(text)))


# A network this large, or a window this long, is scanned with numpy even
# when the stacked timelines must be rebuilt first (a commit moved them);
# below both, a loop over the links costs less than the rebuild.
_STACK_LINKS = 300
_STACK_SPAN = 2 * 86_400


def _blocked_spans(
    network: Network,
    links: Mapping[str, Link],
    need: int,
    duration: int,
    lo: int,
    hi: int,
    symmetric: bool,
) -> dict[_Key, list[Span]]:
    """Blocked starts of every link (symmetric) or link direction, only where some are.

    Without a one-way booking on a link both its directions hold the same
    levels, so one of them is scanned for both.
    """
    one_way = network.one_way
    found: dict[tuple[str, bool], list[Span]] = {}
    if network.stack_ready() or len(links) >= _STACK_LINKS or hi - lo >= _STACK_SPAN:
        rows, stack = network.stack()
        keys = [(link, forward) for link in links for forward in (True, False)]
        wanted = [key for key in keys if key[1] or one_way.get(key[0])]
        spans = stack.blocked_starts([rows[key] for key in wanted], need, duration, lo, hi)
        found = {key: spans[rows[key]] for key in wanted if rows[key] in spans}
    else:
        for link in links:
            for forward in (True, False) if one_way.get(link) else (True,):
                timeline = network.timeline(link, forward)
                blocked = timeline.blocked_starts(need, duration, lo, hi)
                if blocked:
                    found[(link, forward)] = blocked
    out: dict[_Key, list[Span]] = {}
    for link in links:
        ahead = found.get((link, True), [])
        behind = found.get((link, False), []) if one_way.get(link) else ahead
        if symmetric:
            if ahead or behind:
                out[link] = ahead + behind if behind is not ahead else ahead
        else:
            if ahead:
                out[(link, True)] = ahead
            if behind:
                out[(link, False)] = behind
    return out


def all_slots_bits(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    symmetric: bool = True,
) -> IntervalSet:
    """Start instants s in [first_start, stop) such that [s, s + duration) fits `need`."""
    relevant = relevant_nodes(network.topology, (src, dst))
    bits = SlotBits(network, need, duration, (first_start, stop), symmetric, relevant)
    return bits.spans(_search(bits, network.topology, (src, dst), relevant, first_only=False))


def first_slot_bits(
    network: Network,
    src: str,
    dst: str,
    need: int,
    duration: int,
    first_start: int,
    stop: int,
    *,
    symmetric: bool = True,
) -> int | None:
    """The first start of `all_slots_bits`, without working out the later ones."""
    relevant = relevant_nodes(network.topology, (src, dst))
    bits = SlotBits(network, need, duration, (first_start, stop), symmetric, relevant)
    found = _search(bits, network.topology, (src, dst), relevant, first_only=True)
    if not found:
        return None
    return bits.cuts[(found & -found).bit_length() - 1]


def _search(
    bits: SlotBits,
    topology: Topology,
    ends: tuple[str, str],
    relevant: set[str] | None,
    *,
    first_only: bool,
) -> int:
    """The pieces from which dst is reachable, as bits (only the lowest if `first_only`).

    Semi-naive Bellman-Ford: only the starts new to a node's label are pushed
    on; nodes are expanded nearest-first (by hops), and starts already known
    to reach dst travel no further (with `first_only`, neither do starts
    later than the first known). Chains of degree-two nodes act as one hop.
    """
    src, dst = ends
    leaving = _leaving(bits, topology, src, relevant)
    window = bits.full & leaving & _entering(bits, topology, dst, relevant)
    if not window:
        return 0
    labels: dict[str, int] = {src: window}
    fresh: dict[str, int] = {src: window}
    chains: dict[Hop, tuple[str, int]] = {}
    found = 0
    rank = hop_counts(topology, src)
    queue: list[tuple[int, str]] = [(0, src)]
    while queue:
        _, node = heapq.heappop(queue)
        delta = fresh.pop(node, 0)
        if first_only and found:
            delta &= (found & -found) - 1
        else:
            delta &= ~found
        if not delta:
            continue
        for hop in topology.hops(node):
            if relevant is not None and hop.to not in relevant:
                continue
            chain = chains.get(hop)
            if chain is None:
                chain = chains[hop] = _chain(bits, topology, hop, src, dst)
            to, feasible = chain
            reach = delta & feasible
            if not reach or to == src:
                continue
            old = labels.get(to, 0)
            reach &= ~old
            if not reach:
                continue
            labels[to] = old | reach
            if to == dst:
                found = labels[to]
                continue
            waiting = fresh.get(to)
            fresh[to] = reach if waiting is None else waiting | reach
            if waiting is None:
                heapq.heappush(queue, (rank[to], to))
    return found


def _leaving(bits: SlotBits, topology: Topology, src: str, relevant: set[str] | None) -> int:
    out = 0
    for hop in topology.hops(src):
        if relevant is None or hop.to in relevant:
            out |= bits.of(hop)
    return out


def _entering(bits: SlotBits, topology: Topology, dst: str, relevant: set[str] | None) -> int:
    out = 0
    for hop in topology.hops(dst):
        if relevant is None or hop.to in relevant:
            out |= bits.of(Hop(hop.link, dst, not hop.forward))
    return out


def _chain(bits: SlotBits, topology: Topology, hop: Hop, src: str, dst: str) -> tuple[str, int]:
    """Follow `hop` through nodes of degree two: where it ends and its feasible starts."""
    feasible = bits.of(hop)
    here = hop
    while feasible and here.to not in (src, dst):
        onward = topology.hops(here.to)
        if len(onward) != 2:
            break
        here = onward[0] if onward[1].link == here.link else onward[1]
        feasible &= bits.of(here)
    return here.to, feasible
