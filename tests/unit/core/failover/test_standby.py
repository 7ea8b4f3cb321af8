"""Standby paths: the most link-disjoint path with room, checked against brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.failover.standby import standby_path
from braid.core.model.paths import Path, path_problems
from braid.core.model.topology import Hop, topology_from_dict
from tests.unit.core.netgen import simple_paths, topologies

SQUARE = topology_from_dict(
    {
        "nodes": [{"id": n} for n in "ABCD"],
        "links": [
            {"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1},
            {"id": "BD", "a": "B", "b": "D", "capacity": 10, "latency_ms": 1},
            {"id": "AC", "a": "A", "b": "C", "capacity": 10, "latency_ms": 2},
            {"id": "CD", "a": "C", "b": "D", "capacity": 10, "latency_ms": 2},
            {"id": "BC", "a": "B", "b": "C", "capacity": 10, "latency_ms": 1},
        ],
    }
)
PRIMARY = Path(("A", "B", "D"), ("AB", "BD"))


def test_a_disjoint_path_is_found_where_there_is_one() -> None:
    found = standby_path(SQUARE, PRIMARY, lambda hop: 10, 5)
    assert found is not None and found.disjoint
    assert found.path == Path(("A", "C", "D"), ("AC", "CD"))


def test_otherwise_the_least_shared_path_is_named_with_what_it_shares() -> None:
    full = {"AC"}
    found = standby_path(SQUARE, PRIMARY, lambda hop: 0 if hop.link in full else 10, 5)
    assert found is not None and found.path.links == ("AB", "BC", "CD")
    assert found.shared == ("AB",) and not found.disjoint


def test_no_standby_when_only_the_primary_has_room() -> None:
    room = {"AB", "BD"}
    assert standby_path(SQUARE, PRIMARY, lambda hop: 10 if hop.link in room else 0, 5) is None


def test_down_links_are_never_crossed() -> None:
    data = {
        "nodes": [{"id": n} for n in "ABCD"],
        "links": [
            {"id": "AB", "a": "A", "b": "B", "capacity": 10},
            {"id": "BD", "a": "B", "b": "D", "capacity": 10},
            {"id": "AC", "a": "A", "b": "C", "capacity": 10, "state": "down"},
            {"id": "CD", "a": "C", "b": "D", "capacity": 10},
        ],
    }
    assert standby_path(topology_from_dict(data), PRIMARY, lambda hop: 10, 5) is None


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_standby_shares_the_fewest_links_of_any_path_with_room(data: st.DataObject) -> None:
    topology = data.draw(topologies(max_nodes=6))
    nodes = sorted(topology.nodes)
    src, dst = data.draw(st.permutations(nodes))[:2]
    paths = list(simple_paths(topology, src, dst))
    if not paths:
        return
    primary = data.draw(st.sampled_from(paths))
    free = {k: data.draw(st.integers(0, 10)) for k in topology.links}
    need = data.draw(st.integers(1, 10))

    def usable(hop: Hop) -> int:
        return free[hop.link]

    found = standby_path(topology, primary, usable, need)
    fitting = [p for p in paths if p != primary and all(free[k] >= need for k in p.links)]
    if not fitting:
        assert found is None
        return
    assert found is not None
    best = min(sum(k in primary.links for k in p.links) for p in fitting)
    assert found.path != primary and path_problems(topology, found.path, src, dst) == []
    assert all(free[k] >= need for k in found.path.links)
    assert len(found.shared) == best
    assert set(found.shared) == set(found.path.links) & set(primary.links)
