"""Choosing at most k paths: from the max-flow decomposition, greedy widest paths,
or a bounded search over a few candidate paths.

Picking the fewest paths that carry a demand is NP-hard in general (it
contains k-splittable flow), so braid tries the two cheap constructions the
seeds suggest and then searches subsets of at most `CANDIDATE_LIMIT`
candidate paths; every set it returns is jointly feasible.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, zip_longest

from braid.core.graph.search import widest_path
from braid.core.model.network import WindowView
from braid.core.model.paths import Path
from braid.core.model.topology import Hop
from braid.core.multipath.decompose import FlowPath
from braid.core.multipath.maxflow import MaxFlow, cut_offered, endpoint_cuts, min_cut
from braid.core.multipath.mdi import mdi
from braid.core.multipath.plan import Gate
from braid.core.multipath.residual import Ledger, path_hops, successive_widest

# At most 2^10 subsets to try: milliseconds on a national network, and ten
# paths between two sites already cover what an operator would configure.
CANDIDATE_LIMIT = 10

Choice = tuple[FlowPath, ...]


def total(choice: Sequence[FlowPath]) -> int:
    return sum(c.amount for c in choice)


def paths_of(choice: Sequence[FlowPath]) -> list[Path]:
    return [c.path for c in choice]


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A path with what the subset search asks of it many times, computed once."""

    path: Path
    hops: tuple[Hop, ...]
    latency_ms: float
    alone: int  # what it carries with nothing else placed


@dataclass(frozen=True, slots=True)
class _Subset:
    choice: Choice
    mdi: float


def decomposition_prefix(flow: MaxFlow, need: int, max_paths: int) -> Choice | None:
    """The fewest of the widest decomposition paths that carry `need` together."""
    carried = 0
    first = flow.first_paths(max_paths)
    for count, part in enumerate(first, start=1):
        carried += part.amount
        if carried >= need:
            return first[:count]
    return None


def _candidates(view: WindowView, src: str, dst: str, flow: MaxFlow) -> list[_Candidate]:
    """Decomposition and successive widest paths, interleaved so both kinds get in.

    Kept in the window's memo for this flow: a refusal asks for them twice.
    """
    key = ("candidates", src, dst)
    kept = view.memo.get(key)
    if isinstance(kept, tuple) and kept[0] is flow:
        return list(kept[1])
    pool = _find_candidates(view, src, dst, flow)
    view.memo[key] = (flow, tuple(pool))
    return pool


def _find_candidates(view: WindowView, src: str, dst: str, flow: MaxFlow) -> list[_Candidate]:
    greedy = successive_widest(view, src, dst, CANDIDATE_LIMIT)
    paths: list[Path] = []
    for pair in zip_longest(flow.paths, greedy):
        for part in pair:
            if part is not None and part.path not in paths:
                paths.append(part.path)
    out = []
    for path in paths[:CANDIDATE_LIMIT]:
        hops = path_hops(view.topology, path)
        alone = min(view.usable(hop) for hop in hops)
        out.append(_Candidate(path, hops, path.latency_ms(view.topology), alone))
    return out


def _subsets(
    view: WindowView, pool: Sequence[_Candidate], size: int, gate: Gate, floor: int
) -> Iterator[_Subset]:
    """Allowed subsets of `size` that might carry more than `floor`, filled.

    Each path gets all it can take on what the earlier ones left, so every
    subset yielded is jointly feasible; one left with nothing is skipped, as
    a smaller subset already does as well.
    """
    for subset in combinations(pool, size):
        if sum(c.alone for c in subset) <= floor:
            continue  # even alone, these paths cannot carry enough
        value = mdi(c.latency_ms for c in subset)
        if not gate.allows_mdi(value):
            continue
        ledger = Ledger(view)
        placed = []
        for c in subset:
            amount = ledger.room(c.hops)
            if amount <= 0:
                break
            ledger.place(c.hops, amount)
            placed.append(FlowPath(c.path, amount))
        else:
            yield _Subset(tuple(placed), value)


def _smallest_subset(
    view: WindowView, pool: Sequence[_Candidate], need: int, sizes: range, gate: Gate
) -> Choice | None:
    """The fewest candidates carrying `need`; among equals no resequencing, then most."""
    for size in sizes:
        fits = [s for s in _subsets(view, pool, size, gate, need - 1) if total(s.choice) >= need]
        if fits:
            best = min(fits, key=lambda s: (gate.resequence_mdi(s.mdi), -total(s.choice)))
            return best.choice
    return None


def _rank(gate: Gate, choice: Sequence[FlowPath]) -> tuple[int, bool, int]:
    return (len(choice), gate.resequence(paths_of(choice)), -total(choice))


def fewest_paths(
    view: WindowView, src: str, dst: str, need: int, max_paths: int, flow: MaxFlow, gate: Gate
) -> tuple[Choice | None, float | None]:
    """At most `max_paths` paths that carry `need`, when more than one is needed.

    Also returns, when the gate turned every fitting set away, the MDI of
    the fewest paths that would have carried it, so a refusal can say so.
    """
    options: list[Choice | None] = [
        decomposition_prefix(flow, need, max_paths),
        tuple(successive_widest(view, src, dst, max_paths, target=need)),
    ]
    fitting: list[Choice] = [o for o in options if o and total(o) >= need]
    allowed = [o for o in fitting if gate.allows(paths_of(o))]
    best = min(allowed, key=lambda o: _rank(gate, o)) if allowed else None
    # A bounded search may still find fewer paths, or the only ones the gate allows.
    fewer = len(best) - 1 if best is not None else max_paths
    found = None
    if fewer >= 2:  # two paths is the least a split can use: nothing to search below it
        pool = _candidates(view, src, dst, flow)
        found = _smallest_subset(view, pool, need, range(2, fewer + 1), gate)
    chosen = found if found is not None else best
    if chosen is not None or not fitting:
        return chosen, None
    return None, gate.mdi(paths_of(min(fitting, key=lambda o: _rank(gate, o))))


def _ceiling(view: WindowView, src: str, dst: str, max_paths: int, flow: MaxFlow) -> int:
    """No jointly feasible set of at most `max_paths` paths carries more.

    The max flow bounds them all, and the cuts around either end bound
    what `max_paths` paths carry across them.
    """
    ends = endpoint_cuts(view.topology, src, dst)
    return min(flow.value, *(cut_offered(cut, view.usable, max_paths) for cut in ends))


def _min_cut_ceiling(view: WindowView, src: str, dst: str, max_paths: int) -> int:
    """What `max_paths` paths carry at most across the window's minimum cut.

    Every path crosses it, so this bounds them as `_ceiling`'s cuts do; the
    max flow of the window has run already (the view's memo), so the cut
    costs one pass over the source side.
    """
    cut = min_cut(view.topology, src, dst, view.usable, symmetric=view.symmetric)[1]
    return cut_offered(cut, view.usable, max_paths)


def most_bandwidth_total(
    view: WindowView, src: str, dst: str, max_paths: int, flow: MaxFlow, gate: Gate
) -> int:
    """`total(most_bandwidth(...))`, at once when the max flow's first paths carry it all.

    No choice carries more than the max flow, so `most_bandwidth` ends
    with that total whenever the decomposition's first paths reach it.
    """
    flow_mode = gate.mode == "flow"
    # Flow mode allows every set of paths, and no set carries more than the
    # max flow: greedy paths reaching it settle the total before the flow is
    # decomposed.
    greedy = total(successive_widest(view, src, dst, max_paths)) if flow_mode else 0
    if greedy >= flow.value:
        return flow.value
    if not flow_mode:
        first = flow.first_paths(max_paths)
        if first and total(first) >= flow.value and gate.allows(paths_of(first)):
            return flow.value
        return total(most_bandwidth(view, src, dst, max_paths, flow, gate))
    # Nor does any set of `max_paths` jointly feasible paths (the first paths
    # of the decomposition, or a subset below) carry more than a ceiling:
    # greedy paths reaching one settle the total before decomposing too.
    ceilings = _Ceilings(view, src, dst, max_paths, flow)
    if ceilings.reached(greedy):
        return greedy
    first = flow.first_paths(max_paths)
    if first and total(first) >= flow.value:
        return flow.value
    # The greedy paths start with a widest one (the largest bottleneck is one
    # number, however ties fall), so they carry at least what
    # `most_bandwidth`'s single widest path does: no need for that search.
    best = max(total(first), greedy)
    if ceilings.reached(best):
        return best
    pool = _candidates(view, src, dst, flow)
    for size in range(2, min(max_paths, len(pool)) + 1):
        for subset in _subsets(view, pool, size, gate, best):
            best = max(best, total(subset.choice))
    return best


class _Ceilings:
    """`_ceiling`, then `_min_cut_ceiling`, each worked out when first needed."""

    def __init__(self, view: WindowView, src: str, dst: str, max_paths: int, flow: MaxFlow) -> None:
        self.view, self.src, self.dst, self.max_paths, self.flow = view, src, dst, max_paths, flow
        self._found: list[int] = []

    def reached(self, carried: int) -> bool:
        """Whether `carried` reaches a ceiling: then no allowed set carries more."""
        found = self._found
        if not found:
            found.append(_ceiling(self.view, self.src, self.dst, self.max_paths, self.flow))
        if carried >= found[0]:
            return True
        if len(found) == 1:
            found.append(_min_cut_ceiling(self.view, self.src, self.dst, self.max_paths))
        return carried >= found[1]


def most_bandwidth(
    view: WindowView, src: str, dst: str, max_paths: int, flow: MaxFlow, gate: Gate
) -> Choice:
    """The largest total over at most `max_paths` allowed paths; never below one widest path."""
    widest = widest_path(view.topology, src, dst, view.usable)
    options: list[Choice] = [(FlowPath(*widest),) if widest is not None else ()]
    options += [flow.first_paths(max_paths), tuple(successive_widest(view, src, dst, max_paths))]
    allowed = [o for o in options if o and gate.allows(paths_of(o))]
    best = max(allowed, key=lambda o: (total(o), -len(o)), default=())
    if total(best) >= _ceiling(view, src, dst, max_paths, flow):
        return best  # only a subset carrying more would replace it
    if total(best) >= _min_cut_ceiling(view, src, dst, max_paths):
        return best
    pool = _candidates(view, src, dst, flow)
    for size in range(2, min(max_paths, len(pool)) + 1):
        for subset in _subsets(view, pool, size, gate, total(best)):
            if total(subset.choice) > total(best):
                best = subset.choice
    return best
