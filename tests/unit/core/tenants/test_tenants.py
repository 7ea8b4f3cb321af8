"""TALON's tenant throughput allocation (seed 004, Algorithm 1) on braid's network.

The 7-switch topology of TALON Fig. 5a as braid reads it: the figure is not
in the text, but §II and §IV name its three S1->S7 paths,

    path 0 = S1-S2-S7,  path 1 = S1-S3-S4-S7,  path 2 = S1-S5-S6-S7,

with the tenants' hosts behind S1 and S7 (so the requests run S1 -> S7 and
the host access links are not modelled). The paper gives no link speeds;
braid takes 300 Mbit/s on every link, so that one path cannot carry two
200 Mbit/s tenants - the interference of the motivating experiment (§II-B).
Every link has the default 1 ms latency, so path 0 is the shortest and
paths 1 and 2 tie; the tie goes to path 1 (S3 sorts before S5).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.graph.search import widest_path
from braid.core.model.booking import Allocation, Booking
from braid.core.model.network import Network
from braid.core.model.timeline import OverbookingError
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.model.units import FOREVER
from braid.core.planning.invariants import booking_problems, overbooking, split_problems
from braid.core.tenants import TenantAllocator, TenantOutcome, TenantRequest, TenantState
from braid.core.tenants.draft import Draft

M = 1_000_000
PATH0 = ("S1", "S2", "S7")
PATH1 = ("S1", "S3", "S4", "S7")
PATH2 = ("S1", "S5", "S6", "S7")


def talon_topology(capacity: int = 300) -> Topology:
    links = [(a, b) for path in (PATH0, PATH1, PATH2) for a, b in pairwise(path)]
    return topology_from_dict(
        {
            "nodes": [{"id": f"S{i}"} for i in range(1, 8)],
            "links": [{"id": f"{a}-{b}", "a": a, "b": b, "capacity": capacity} for a, b in links],
        }
    )


def tenant(
    rid: str, mbps: int, start: int = 0, end: int = FOREVER, main: tuple[str, ...] | None = PATH0
) -> TenantRequest:
    return TenantRequest(rid, f"t-{rid}", "S1", "S7", mbps * M, start, end, main)


@pytest.fixture
def net() -> Network:
    return Network(talon_topology())


@pytest.fixture
def alloc(net: Network) -> TenantAllocator:
    return TenantAllocator(net)


def on(state: TenantState | TenantOutcome) -> dict[tuple[str, ...], int]:
    """Mbit/s per node path, main and sub-paths together."""
    allocations = ((state.main,) if state.main is not None else ()) + state.subs
    return {a.path.nodes: a.bandwidth // M for a in allocations}


# -- the paper's scenarios ------------------------------------------------------


def test_fig8_second_tenant_keeps_its_main_path_and_gets_a_sub_path(
    alloc: TenantAllocator, net: Network
) -> None:
    first = alloc.allocate(tenant("T1", 200, start=0))
    assert on(first) == {PATH0: 200} and first.subs == () and first.shortfall == 0
    second = alloc.allocate(tenant("T2", 200, start=30))
    assert second.granted == 200 * M and second.shortfall == 0 and second.reason is None
    assert second.main is not None and second.main.path.nodes == PATH0
    assert second.main.bandwidth == 100 * M  # what T1's main path leaves
    assert [s.path.nodes for s in second.subs] in ([PATH1], [PATH2])
    assert second.reallocated == ()
    assert on(alloc.state("T1")) == {PATH0: 200}  # T1 untouched: main paths are never preempted
    assert net.bookings["T1"] == first.booking
    assert overbooking(net) == []


def test_victim_sub_path_is_preempted_and_reallocated(alloc: TenantAllocator, net: Network) -> None:
    first = alloc.allocate(tenant("T1", 400))
    assert on(first) == {PATH0: 300, PATH1: 100}
    second = alloc.allocate(tenant("T2", 300, start=30, main=PATH1))
    assert on(second) == {PATH1: 300} and second.subs == ()
    (moved,) = second.reallocated
    assert moved.id == "T1" and moved == net.bookings["T1"]
    assert {a.path.nodes: a.bandwidth // M for a in moved.allocations} == {PATH0: 300, PATH2: 100}
    state = alloc.state("T1")
    assert state.granted == 400 * M and state.main == first.main
    assert overbooking(net) == []


def test_zero_room_on_the_main_path_still_preempts_sub_paths(alloc: TenantAllocator) -> None:
    # The paper's line 11 tests 0 < C_R < R; braid also preempts when C_R = 0.
    alloc.allocate(tenant("T1", 600))
    assert on(alloc.state("T1")) == {PATH0: 300, PATH1: 300}
    second = alloc.allocate(tenant("T2", 300, main=PATH1))
    assert on(second) == {PATH1: 300}
    assert on(alloc.state("T1")) == {PATH0: 300, PATH2: 300}


def test_largest_victim_first_and_no_more_than_needed(alloc: TenantAllocator) -> None:
    alloc.allocate(tenant("A", 400))  # 300 on path 0, 100 on path 1
    alloc.allocate(tenant("B", 450, main=PATH2))  # 300 on path 2, 150 on path 1
    assert on(alloc.state("B")) == {PATH2: 300, PATH1: 150}
    outcome = alloc.allocate(tenant("C", 200, main=PATH1))  # 50 free; B's 150 suffices
    assert on(outcome) == {PATH1: 200}
    assert on(alloc.state("A")) == {PATH0: 300, PATH1: 100}
    # Nothing is free anywhere for B's 150, so it keeps only its main path.
    assert [b.id for b in outcome.reallocated] == ["B"]
    assert on(alloc.state("B")) == {PATH2: 300}
    assert alloc.state("B").shortfall == 150 * M


def test_sub_paths_outside_the_window_are_no_victims(alloc: TenantAllocator) -> None:
    alloc.allocate(tenant("T1", 400, start=0, end=100))
    outcome = alloc.allocate(tenant("T2", 300, start=100, end=200, main=PATH1))
    assert on(outcome) == {PATH1: 300} and outcome.reallocated == ()
    assert on(alloc.state("T1")) == {PATH0: 300, PATH1: 100}


def test_a_victim_is_first_grown_on_its_own_main_path(alloc: TenantAllocator) -> None:
    alloc.allocate(tenant("X", 300, start=0, end=10))  # fills path 0 until 10
    alloc.allocate(tenant("T1", 100, start=0, end=20))  # main path 0 full: all on path 1
    assert on(alloc.state("T1")) == {PATH1: 100}
    alloc.release("X")  # path 0 is free again, but T1 is not moved back by itself
    assert on(alloc.state("T1")) == {PATH1: 100}
    outcome = alloc.allocate(tenant("T2", 300, start=5, end=15, main=PATH1))
    assert on(outcome) == {PATH1: 300}
    assert on(alloc.state("T1")) == {PATH0: 100}
    assert alloc.state("T1").main is not None


# -- plain cases ------------------------------------------------------------------


def test_main_path_only_when_it_suffices(alloc: TenantAllocator) -> None:
    outcome = alloc.allocate(tenant("T1", 150))
    assert on(outcome) == {PATH0: 150} and outcome.subs == ()


def test_main_path_with_exactly_the_requirement_free_is_enough(alloc: TenantAllocator) -> None:
    # The paper tests C_R > R; with exactly R free braid books the main path only.
    alloc.allocate(tenant("T1", 100))
    outcome = alloc.allocate(tenant("T2", 200))
    assert on(outcome) == {PATH0: 200} and outcome.subs == ()


def test_shortest_main_path_when_none_is_given() -> None:
    topology = topology_from_dict(
        {
            "nodes": [{"id": n} for n in ("A", "B", "C", "D")],
            "links": [
                {"id": "A-B", "a": "A", "b": "B", "capacity": 100, "latency_ms": 5},
                {"id": "B-D", "a": "B", "b": "D", "capacity": 100, "latency_ms": 5},
                {"id": "A-C", "a": "A", "b": "C", "capacity": 100, "latency_ms": 1},
                {"id": "C-D", "a": "C", "b": "D", "capacity": 100, "latency_ms": 1},
            ],
        }
    )
    alloc = TenantAllocator(Network(topology))
    outcome = alloc.allocate(TenantRequest("r", "t", "A", "D", 150 * M, 0, 10))
    assert outcome.main is not None and outcome.main.path.nodes == ("A", "C", "D")
    assert on(outcome) == {("A", "C", "D"): 100, ("A", "B", "D"): 50}


def test_parallel_links_take_the_one_with_most_room() -> None:
    topology = topology_from_dict(
        {
            "nodes": [{"id": "A"}, {"id": "B"}],
            "links": [
                {"id": "fast", "a": "A", "b": "B", "capacity": 100, "latency_ms": 1},
                {"id": "big", "a": "A", "b": "B", "capacity": 400, "latency_ms": 9},
            ],
        }
    )
    alloc = TenantAllocator(Network(topology))
    outcome = alloc.allocate(TenantRequest("r", "t", "A", "B", 300 * M, 0, 10, ("A", "B")))
    assert outcome.main is not None and outcome.main.path.links == ("big",)
    assert outcome.subs == ()


def test_partial_grant_reports_the_shortfall(alloc: TenantAllocator, net: Network) -> None:
    outcome = alloc.allocate(tenant("T1", 1000, start=10, end=70))
    assert outcome.granted == 900 * M and outcome.shortfall == 100 * M
    assert outcome.booking == net.bookings["T1"]
    assert outcome.reason == (
        "tenant t-T1 gets 900 Mbit/s of 1 Gbit/s: no further path has free capacity "
        "between S1 and S7 in [10, 70)"
    )


def test_nothing_free_books_nothing(alloc: TenantAllocator, net: Network) -> None:
    alloc.allocate(tenant("T1", 900))
    outcome = alloc.allocate(tenant("T2", 100, start=5))
    assert outcome.granted == 0 and outcome.booking is None and outcome.main is None
    assert outcome.shortfall == 100 * M and outcome.reason is not None
    assert "gets nothing of 100 Mbit/s" in outcome.reason and "[5, open-ended)" in outcome.reason
    assert "T2" not in alloc.states and "T2" not in net.bookings


def test_unconnected_endpoints_say_so() -> None:
    topology = topology_from_dict(
        {"nodes": [{"id": "A"}, {"id": "B"}, {"id": "C"}], "links": [
            {"id": "A-B", "a": "A", "b": "B", "capacity": 10}]}
    )  # fmt: skip
    outcome = TenantAllocator(Network(topology)).allocate(
        TenantRequest("r", "t", "A", "C", M, 0, 10)
    )
    assert outcome.granted == 0 and outcome.reason == (
        "tenant t gets nothing of 1 Mbit/s: no path joins A and C"
    )


def test_half_open_windows_do_not_collide(alloc: TenantAllocator) -> None:
    alloc.allocate(tenant("T1", 300, start=0, end=100))
    assert on(alloc.allocate(tenant("T2", 300, start=100, end=200))) == {PATH0: 300}


def test_release_frees_without_handing_capacity_back(alloc: TenantAllocator, net: Network) -> None:
    alloc.allocate(tenant("T1", 300))
    short = alloc.allocate(tenant("T2", 1000))
    assert short.shortfall == 400 * M
    (freed,) = alloc.release("T1")
    assert freed.id == "T1" and "T1" not in net.bookings and "T1" not in alloc.states
    assert alloc.state("T2").shortfall == 400 * M  # nobody is grown behind its back
    with pytest.raises(InputError) as err:
        alloc.release("T1")
    assert err.value.field == "request_id"


# -- bad input --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("main", "words"),
    [
        (("S1", "S7"), "S1 and S7 are not joined by a link"),
        (("S2", "S7"), "runs S2->S7, but the request is S1->S7"),
        (("S1", "S2"), "runs S1->S2, but the request is S1->S7"),
        (("S1", "S2", "S1", "S2", "S7"), "visits S1 twice"),
        (("S1", "S9", "S7"), "unknown node 'S9'"),
        (("S1",), "needs at least S1 and S7"),
    ],
)
def test_bad_main_path_is_refused(
    alloc: TenantAllocator, net: Network, main: tuple[str, ...], words: str
) -> None:
    alloc.allocate(tenant("T0", 400))
    before = dict(net.bookings)
    with pytest.raises(InputError) as err:
        alloc.allocate(tenant("T1", 100, main=main))
    assert err.value.field == "main_path" and words in str(err.value)
    assert net.bookings == before and set(alloc.states) == {"T0"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"throughput": 0}, "throughput"),
        ({"end": 0}, "end"),
        ({"dst": "S1"}, "dst"),
        ({"src": "nowhere"}, "src"),
        ({"id": "T0"}, "id"),
    ],
)
def test_bad_request_fields_are_named(
    alloc: TenantAllocator, change: dict[str, Any], field: str
) -> None:
    alloc.allocate(tenant("T0", 100))
    with pytest.raises(InputError) as err:
        alloc.allocate(replace(tenant("T1", 1, end=10), **change))
    assert err.value.field == field


# -- the draft the allocator plans on -----------------------------------------------


def test_draft_refuses_overbooking_and_stays_usable(net: Network) -> None:
    TenantAllocator(net).allocate(tenant("T1", 100))
    draft = Draft(net)
    main = net.bookings["T1"].allocations[0]
    with pytest.raises(OverbookingError):
        draft.put("T2", Booking("T2", 0, 10, (Allocation(main.path, 201 * M),)))
    draft.put("T2", Booking("T2", 0, 10, (Allocation(main.path, 200 * M),)))
    draft.put("T1", None)
    assert draft.free(("S1-S2", True), 0, 10) == 100 * M
    assert draft.free(("S1-S2", True), 10, 20) == 300 * M
    assert "T1" in net.bookings and "T2" not in net.bookings  # nothing applied yet
    draft.apply()
    assert set(net.bookings) == {"T2"} and overbooking(net) == []


class _FailingNetwork(Network):
    """A network whose commit of one booking id fails, as a bug would."""

    fail_on = ""

    def commit(self, booking: Booking) -> None:
        if booking.id == self.fail_on:
            raise RuntimeError("injected failure")
        super().commit(booking)


def test_a_failure_midway_leaves_the_network_as_it_was() -> None:
    net = _FailingNetwork(talon_topology())
    alloc = TenantAllocator(net)
    alloc.allocate(tenant("T1", 400))
    before = dict(net.bookings)
    net.fail_on = "T2"  # T1's reallocation is committed first, then T2's fails
    with pytest.raises(RuntimeError):
        alloc.allocate(tenant("T2", 300, main=PATH1))
    assert net.bookings == before and set(alloc.states) == {"T1"}
    assert on(alloc.state("T1")) == {PATH0: 300, PATH1: 100}
    assert overbooking(net) == []
    net.fail_on = ""
    assert alloc.allocate(tenant("T2", 300, main=PATH1)).granted == 300 * M


# -- properties -------------------------------------------------------------------


@st.composite
def small_topologies(draw: st.DrawFn) -> Topology:
    n = draw(st.integers(3, 6))
    nodes = [f"n{i}" for i in range(n)]
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]]
    chain = list(pairwise(nodes))  # some connectivity, so most requests get something
    extra = draw(st.lists(st.sampled_from(pairs), max_size=n + 2))
    links = [
        {"id": f"l{i}", "a": a, "b": b, "capacity": draw(st.sampled_from([100, 200, 300])),
         "latency_ms": draw(st.integers(1, 5))}
        for i, (a, b) in enumerate(chain[: draw(st.integers(1, n - 1))] + extra)
    ]  # fmt: skip
    return topology_from_dict({"nodes": [{"id": x} for x in nodes], "links": links})


def node_paths(topology: Topology, src: str, dst: str) -> Iterator[tuple[str, ...]]:
    """Every simple node path src -> dst (tiny graphs only)."""

    def walk(nodes: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        if nodes[-1] == dst:
            yield nodes
            return
        for to in sorted({hop.to for hop in topology.hops(nodes[-1])} - set(nodes)):
            yield from walk((*nodes, to))

    yield from walk((src,))


@st.composite
def requests(draw: st.DrawFn, topology: Topology, rid: str) -> TenantRequest:
    src, dst = draw(st.permutations(sorted(topology.nodes)))[:2]
    start = draw(st.integers(0, 40))
    end = draw(st.one_of(st.just(FOREVER), st.integers(start + 1, start + 40)))
    paths = list(node_paths(topology, src, dst))
    main = draw(st.one_of(st.none(), st.sampled_from(paths))) if paths else None
    throughput = draw(st.integers(1, 10)) * 50 * M
    return TenantRequest(
        rid, f"t{rid}", src, dst, throughput, start, end, main, draw(st.booleans())
    )


def check_all(alloc: TenantAllocator, net: Network) -> None:
    assert overbooking(net) == []
    assert set(alloc.states) == set(net.bookings)
    for rid, state in alloc.states.items():
        r = state.request
        booking = net.bookings[rid]
        assert state.booking() == booking
        assert booking_problems(net.topology, booking, r.src, r.dst) == []
        assert split_problems(booking.allocations, state.granted) == []
        assert 0 < state.granted <= r.throughput
        assert len({a.path for a in booking.allocations}) == len(booking.allocations)


def check_outcome(net: Network, r: TenantRequest, out: TenantOutcome) -> None:
    assert out.granted + out.shortfall == r.throughput and out.granted <= r.throughput
    assert (out.booking is None) == (out.granted == 0)
    assert out.booking == net.bookings.get(r.id)
    assert (out.reason is None) == (out.shortfall == 0)
    if out.shortfall:  # sub-paths were added until no path with room was left
        view = net.window(r.start, r.end, symmetric=r.symmetric)
        assert widest_path(net.topology, r.src, r.dst, view.usable) is None
    for moved in out.reallocated:
        assert moved.id != r.id
        assert net.bookings.get(moved.id) == (moved if moved.allocations else None)


def check_others(
    before: dict[str, TenantState], alloc: TenantAllocator, out: TenantOutcome
) -> None:
    """Only the reported requests moved, and none lost (or shrank) its main allocation."""
    moved = {b.id for b in out.reallocated}
    for rid, old in before.items():
        if rid not in moved:
            assert alloc.states[rid] == old
            continue
        if old.main is None:
            continue
        new = alloc.states[rid].main
        assert new is not None and new.path == old.main.path
        assert new.bandwidth >= old.main.bandwidth


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_tenants_keep_every_invariant(data: st.DataObject) -> None:
    topology = data.draw(small_topologies())
    net = Network(topology)
    alloc = TenantAllocator(net)
    for step in range(data.draw(st.integers(1, 12))):
        before = dict(alloc.states)
        if before and data.draw(st.integers(0, 3)) == 0:
            rid = data.draw(st.sampled_from(sorted(before)))
            alloc.release(rid)
            assert {k: v for k, v in before.items() if k != rid} == dict(alloc.states)
        else:
            request = data.draw(requests(topology, f"r{step}"))
            outcome = alloc.allocate(request)
            check_outcome(net, request, outcome)
            event(f"reallocated {len(outcome.reallocated)}")
            event(f"partial {0 < outcome.granted < request.throughput}")
            check_others(before, alloc, outcome)
        check_all(alloc, net)


@st.composite
def talon_requests(draw: st.DrawFn, rid: str) -> TenantRequest:
    start = draw(st.integers(0, 30))
    end = draw(st.one_of(st.just(FOREVER), st.integers(start + 1, start + 30)))
    main = draw(st.sampled_from([PATH0, PATH1, PATH2, None]))
    throughput = draw(st.integers(1, 12)) * 50 * M
    return TenantRequest(rid, f"t{rid}", "S1", "S7", throughput, start, end, main)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_crowded_fig5a_keeps_every_invariant(data: st.DataObject) -> None:
    """Many tenants on the three paths: sub-paths get preempted and moved often."""
    net = Network(talon_topology())
    alloc = TenantAllocator(net)
    for step in range(data.draw(st.integers(2, 10))):
        before = dict(alloc.states)
        if before and data.draw(st.integers(0, 4)) == 0:
            alloc.release(data.draw(st.sampled_from(sorted(before))))
        else:
            request = data.draw(talon_requests(f"r{step}"))
            outcome = alloc.allocate(request)
            event(f"reallocated {len(outcome.reallocated)}")
            check_outcome(net, request, outcome)
            check_others(before, alloc, outcome)
        check_all(alloc, net)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_bad_main_paths_change_nothing(data: st.DataObject) -> None:
    topology = data.draw(small_topologies())
    net = Network(topology)
    alloc = TenantAllocator(net)
    for step in range(3):
        alloc.allocate(data.draw(requests(topology, f"r{step}")))
    request = data.draw(requests(topology, "bad"))
    nodes = data.draw(st.lists(st.sampled_from(sorted(topology.nodes)), min_size=1, max_size=5))
    bad = tuple(nodes)
    if bad in set(node_paths(topology, request.src, request.dst)):
        return
    before = dict(net.bookings)
    with pytest.raises(InputError) as err:
        alloc.allocate(replace(request, main_path=bad))
    assert err.value.field == "main_path"
    assert net.bookings == before
