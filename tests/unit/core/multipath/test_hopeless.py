"""Fast split refusals: every shortcut proves what it skips, so no answer changes.

A cut offering less than the demand to k paths rules a window out; following
that cut forward skips only starts where it still does; a refusal's
alternatives are those the full searches find. Each is checked here against
brute force (every start, every plan `split_fixed` finds) or against the
search it stands in for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.graph.reach import static_width
from braid.core.model.network import Network, WindowView
from braid.core.model.timeline import free_from_many
from braid.core.model.topology import Hop
from braid.core.multipath import SplitPlan, split_earliest, split_fixed, split_max_bandwidth
from braid.core.multipath.chains import Contraction, Skeleton
from braid.core.multipath.earliest import split_earliest_start
from braid.core.multipath.hopeless import CutBounds, first_start_reaching
from braid.core.multipath.maxflow import (
    cut_offered,
    endpoint_cuts,
    link_usable,
    max_flow,
    max_flow_value,
    min_cut,
)
from braid.core.multipath.mdi import DEFAULT_POLICY
from braid.core.multipath.plan import Gate
from braid.core.multipath.residual import path_hops
from braid.core.multipath.split import has_plan, plan_in_view
from braid.core.planning.decisions import Refused
from braid.core.planning.planner import Planner
from braid.core.planning.requests import parse_request
from tests.unit.core.netgen import HORIZON, loaded_networks

ends = st.integers(0, 10**6)


def pick_ends(network: Network, pick: int) -> tuple[str, str]:
    nodes = sorted(network.topology.nodes)
    src = nodes[pick % len(nodes)]
    others = [n for n in nodes if n != src]
    return src, others[(pick // len(nodes)) % len(others)]


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), st.lists(st.integers(-5, HORIZON + 5), max_size=12), st.integers(1, 15))
def test_free_from_reads_every_start_as_free_does(
    network: Network, starts: list[int], duration: int
) -> None:
    chosen = np.array(sorted(starts), dtype=np.int64)
    for timeline in network.timelines().values():
        expected = [timeline.free(s, s + duration) for s in chosen.tolist()]
        assert timeline.free_from(chosen, duration).tolist() == expected
    every = list(network.timelines().values())
    together = free_from_many(every, chosen, duration)
    assert together.shape == (len(every), len(chosen))
    for row, timeline in zip(together.tolist(), every, strict=True):
        assert row == [timeline.free(s, s + duration) for s in chosen.tolist()]


@settings(max_examples=200, deadline=None)
@given(
    loaded_networks(),
    ends,
    st.integers(1, 30),
    st.integers(0, HORIZON),
    st.integers(1, 12),
    st.integers(1, 3),
    st.booleans(),
)
def test_a_cut_offers_at_least_what_any_split_carries(
    network: Network, pick: int, need: int, start: int, length: int, k: int, symmetric: bool
) -> None:
    src, dst = pick_ends(network, pick)
    topology = network.topology
    view = WindowView(network, start, start + length, symmetric)
    joint = link_usable(topology, view.usable, symmetric=symmetric)
    cuts = [
        *endpoint_cuts(topology, src, dst),
        min_cut(topology, src, dst, joint, symmetric=symmetric)[1],
    ]
    bounds = CutBounds(network, src, dst, need, k, symmetric)
    hopeless = bounds.hopeless(WindowView(network, start, start + length, symmetric).usable)
    options: dict[str, Any] = {"max_paths": k, "symmetric": symmetric}
    found = split_fixed(network, src, dst, need, start, start + length, **options)
    widest = split_max_bandwidth(network, src, dst, start, start + length, **options)
    carried = [plan.total for plan in (found, widest) if isinstance(plan, SplitPlan)]
    for cut in cuts:
        assert all(total <= cut_offered(cut, joint, k) for total in carried)
    if hopeless is not None:
        assert cut_offered(hopeless, joint, k) < need
        assert not isinstance(found, SplitPlan)


@settings(max_examples=200, deadline=None)
@given(
    loaded_networks(),
    ends,
    st.integers(1, 30),
    st.integers(0, HORIZON),
    st.integers(1, 12),
    st.integers(1, 3),
    st.booleans(),
)
def test_following_a_cut_skips_only_starts_it_rules_out(
    network: Network, pick: int, need: int, after: int, duration: int, k: int, symmetric: bool
) -> None:
    src, dst = pick_ends(network, pick)
    bounds = CutBounds(network, src, dst, need, k, symmetric)
    cut = bounds.hopeless(network.window(after, after + duration, symmetric=symmetric).usable)
    if cut is None:
        return
    stop = HORIZON + duration + 2
    found = first_start_reaching(bounds, cut, after, stop, duration)

    def offered(start: int) -> int:
        view = WindowView(network, start, start + duration, symmetric)
        return cut_offered(cut, link_usable(network.topology, view.usable, symmetric=symmetric), k)

    for start in range(after + 1, found if found is not None else stop):
        assert offered(start) < need, f"start {start} was skipped but the cut offers enough"
    if found is not None:
        assert after < found < stop and offered(found) >= need


@settings(max_examples=200, deadline=None)
@given(
    loaded_networks(),
    ends,
    st.integers(1, 30),
    st.integers(0, HORIZON),
    st.integers(1, 12),
    st.integers(1, 3),
    st.sampled_from(["flow", "packet"]),
    st.booleans(),
)
def test_a_refused_start_asked_again_gives_the_same_earliest_start(
    network: Network,
    pick: int,
    need: int,
    not_before: int,
    duration: int,
    k: int,
    mode: str,
    symmetric: bool,
) -> None:
    src, dst = pick_ends(network, pick)
    options: dict[str, Any] = {"max_paths": k, "mode": mode, "symmetric": symmetric}
    refused = split_fixed(network, src, dst, need, not_before, not_before + duration, **options)
    if isinstance(refused, SplitPlan):
        return
    full = split_earliest(network, src, dst, need, duration, not_before, **options)
    told = split_earliest(
        network, src, dst, need, duration, not_before, **options, refused_at_start=True
    )
    start = split_earliest_start(network, src, dst, need, duration, not_before, **options)
    assert (full and full[0]) == (told and told[0]) == (start if full else None)
    # Brute force: the first start at all that admits a plan (after HORIZON all starts are alike).
    expected = next(
        (
            s
            for s in range(not_before, max(not_before, HORIZON) + 1)
            if isinstance(
                split_fixed(network, src, dst, need, s, s + duration, **options), SplitPlan
            )
        ),
        None,
    )
    assert start == expected


@settings(max_examples=150, deadline=None)
@given(
    loaded_networks(),
    st.lists(
        st.tuples(ends, st.integers(1, 30), st.integers(0, HORIZON), st.integers(1, 12)),
        min_size=1,
        max_size=6,
    ),
    st.integers(2, 3),
    st.booleans(),
)
def test_a_split_refusal_reports_what_the_full_searches_find(
    network: Network, asks: list[tuple[int, int, int, int]], k: int, symmetric: bool
) -> None:
    planner = Planner(network.topology)
    planner.network = network
    for i, (pick, need, start, length) in enumerate(asks):
        src, dst = pick_ends(network, pick)
        fields = {"id": f"q{i}", "src": src, "dst": dst, "start": start, "end": start + length}
        request = parse_request(
            {**fields, "bandwidth": f"{need}bps", "max_paths": k, "directional": not symmetric},
            network.topology,
        )
        decision, staged = planner.decide(request)
        if staged is not None:
            network.commit(staged)
            continue
        options: dict[str, Any] = {"max_paths": k, "symmetric": symmetric}
        assert isinstance(decision, Refused) and decision.alternatives is not None
        refusal = split_fixed(network, src, dst, need, start, start + length, **options)
        assert not isinstance(refusal, SplitPlan)
        assert decision.reason.startswith(refusal.reason)
        widest = split_max_bandwidth(network, src, dst, start, start + length, **options)
        assert decision.alternatives.max_bandwidth == (widest.total if widest else 0)
        earliest = split_earliest(network, src, dst, need, length, start, **options)
        assert decision.alternatives.earliest_start == (earliest[0] if earliest else None)


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), ends, st.integers(0, HORIZON), st.integers(1, 12), st.booleans())
def test_a_skeleton_gives_the_chains_a_contraction_walks(
    network: Network, pick: int, start: int, length: int, symmetric: bool
) -> None:
    src, dst = pick_ends(network, pick)
    topology = network.topology
    usable = WindowView(network, start, start + length, symmetric).usable
    skeleton = Skeleton.of(topology, (src, dst))
    contraction = Contraction(topology, (src, dst))
    walked = [chain for node in contraction.kept for chain in contraction.chains_from(node, usable)]
    kept = skeleton.kept
    read = [
        (kept[tail], kept[head], hops, tuple(map(usable, hops)))
        for tail, head, hops in skeleton.chains
        if min(map(usable, hops)) > 0
    ]
    assert read == [(c.tail, c.head, c.hops, c.widths) for c in walked]
    assert all(list(skeleton.hops[node]) == list(contraction.hops(node)) for node in skeleton.hops)


@settings(max_examples=150, deadline=None)
@given(loaded_networks(), ends, st.integers(1, 40), st.integers(0, HORIZON), st.integers(1, 12))
def test_the_shortcuts_of_a_split_search_prove_what_they_skip(
    network: Network, pick: int, need: int, start: int, length: int
) -> None:
    """One path wider than the demand with nothing booked; a plan found by its first paths."""
    src, dst = pick_ends(network, pick)
    topology = network.topology

    def capacity(hop: Hop) -> int:
        return topology.links[hop.link].capacity

    if static_width(topology, src, dst) >= need:
        assert max_flow_value(topology, src, dst, capacity) >= need
        for k in (1, 2, 3):
            # What `never` no longer looks for once one path is that wide.
            assert CutBounds(network, src, dst, need, k, True)._small_cut(capacity) is None
    view = WindowView(network, start, start + length, True)
    for k in (1, 2, 3):
        gate = Gate(topology, "flow", DEFAULT_POLICY)
        planned = plan_in_view(view, src, dst, need, k, gate)
        assert has_plan(view, src, dst, need, k, gate) == (planned is not None)
    for path in (p.path for p in max_flow(topology, src, dst, view.usable).paths):
        expected = tuple(
            Hop(link, there, topology.links[link].a == here)
            for here, there, link in zip(path.nodes, path.nodes[1:], path.links, strict=False)
        )
        assert path_hops(topology, path) == expected
