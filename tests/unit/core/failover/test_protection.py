"""Where a protected reservation's traffic goes, and link states in topology data."""

from __future__ import annotations

from typing import Any

import pytest

from braid.core.errors import InputError, TopologyError
from braid.core.failover.protection import ProtectedPaths, down_links, with_link_state
from braid.core.model.paths import Path
from braid.core.model.topology import topology_from_dict, topology_to_dict

PRIMARY = Path(("A", "B", "D"), ("AB", "BD"))
STANDBY = Path(("A", "C", "D"), ("AC", "CD"))
LINK: dict[str, Any] = {"id": "AB", "a": "A", "b": "B", "capacity": 10}
PAIR: dict[str, Any] = {"nodes": [{"id": n} for n in "AB"], "links": [LINK]}


@pytest.mark.parametrize(
    ("on_standby", "down", "revert", "expected"),
    [
        (False, set(), True, False),
        (False, {"BD"}, True, True),  # primary broken: over to the standby
        (False, {"BD", "CD"}, True, False),  # both broken: stays, degraded
        (True, {"BD"}, True, True),
        (True, set(), True, False),  # primary whole again: back when reverting
        (True, set(), False, True),  # ... else stays
        (True, {"CD"}, False, False),  # the standby breaks: back even without revert
        (True, {"CD", "AB"}, False, True),  # both broken: stays
    ],
)
def test_choose(on_standby: bool, down: set[str], revert: bool, expected: bool) -> None:
    paths = ProtectedPaths(PRIMARY, STANDBY, on_standby)
    assert paths.choose(down, revert=revert).on_standby is expected


def test_degraded_names_the_down_links_under_the_traffic() -> None:
    paths = ProtectedPaths(PRIMARY, STANDBY).choose({"BD", "CD"}, revert=True)
    assert paths.degraded({"BD", "CD"}) == ("BD",)
    assert ProtectedPaths(PRIMARY, STANDBY, True).degraded({"BD"}) == ()


def test_a_down_link_stays_in_the_topology_but_leaves_the_adjacency() -> None:
    data = with_link_state(PAIR, "AB", "down")
    assert "state" not in LINK  # the input is not changed
    topology = topology_from_dict(data)
    assert down_links(topology) == {"AB"} and "AB" in topology.links
    assert topology.hops("A") == ()
    assert topology_to_dict(topology)["links"][0]["state"] == "down"
    back = topology_from_dict(with_link_state(data, "AB", "up"))
    assert down_links(back) == frozenset() and len(back.hops("A")) == 1
    assert "state" not in topology_to_dict(back)["links"][0]


def test_bad_states_and_links_name_the_field() -> None:
    with pytest.raises(InputError) as state:
        with_link_state(PAIR, "AB", "flaky")
    assert state.value.field == "state"
    with pytest.raises(InputError) as link:
        with_link_state(PAIR, "XX", "down")
    assert link.value.field == "link"
    bad = {**PAIR, "links": [{**LINK, "state": 1}]}
    with pytest.raises(TopologyError) as stored:
        topology_from_dict(bad)
    assert stored.value.field == "links[0].state"
