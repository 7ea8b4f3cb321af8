"""A domain of kind nsi in the orchestrator's topology: its entry, its errors, its STPs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from braid.core.errors import TopologyError
from braid.core.negotiation.domains import global_view_from_dict, nsi_peers
from braid.core.negotiation.routes import route_legs
from braid.core.nsi.peer import segment_stps, vlan_of

NET = "urn:ogf:network:peer.test:topology"
BASE: dict[str, Any] = {
    "domains": [
        {"id": "site-a", "kind": "site"},
        {
            "id": "onsa",
            "kind": "nsi",
            "nsi": {
                "provider": "http://127.0.0.1:9080/NSI/services/CS2",
                "nsa": "urn:ogf:network:peer.test:nsa",
                "stps": {"n1": f"{NET}:p1", "n3": f"{NET}:p3"},
            },
        },
        {"id": "site-b", "kind": "site"},
    ],
    "nodes": [
        {"id": "a-edge", "domain": "site-a"},
        {"id": "n1", "domain": "onsa"},
        {"id": "n3", "domain": "onsa"},
        {"id": "b-edge", "domain": "site-b"},
    ],
    "links": [
        {"id": "a-n", "a": "a-edge", "b": "n1", "capacity": "1G", "vlans": "1780-1781"},
        {"id": "n-b", "a": "n3", "b": "b-edge", "capacity": "1G", "vlans": "1785"},
    ],
}


def _with(change: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["domains"][1]["nsi"].update(change)
    return data


def test_an_nsi_domain_is_blind_owns_its_links_and_maps_its_hand_offs_to_stps() -> None:
    view = global_view_from_dict(BASE)
    spec = view.domains["onsa"]
    assert (spec.kind, spec.visible, spec.agent) == ("nsi", False, None)
    assert {view.links[i].owner for i in ("a-n", "n-b")} == {"onsa"}
    peer = nsi_peers(view)["onsa"]
    assert peer.nsa == "urn:ogf:network:peer.test:nsa" and peer.timeout == 20.0
    legs = route_legs(view, ("site-a", "onsa", "site-b"), "a-edge", "b-edge")
    assert legs[1].entry == "a-edge" and legs[1].exit == "b-edge"  # its span: hand-off to hand-off
    stps = segment_stps(peer, view.nsi_ends("onsa"), "a-edge", "b-edge", 100_000_001)
    assert (stps.source, stps.dest) == (f"{NET}:p1?vlan=1780-1781", f"{NET}:p3?vlan=1785")
    assert (stps.source_link, stps.dest_link, stps.capacity_mbps) == ("a-n", "n-b", 101)
    assert vlan_of(f"{NET}:p1?vlan=1781") == 1781 and vlan_of(f"{NET}:p1?vlan=1780-1781") is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"provider": "ftp://x"}, "domains[1].nsi.provider"),
        ({"nsa": "peer.test:nsa"}, "domains[1].nsi.nsa"),
        ({"requester": 7}, "domains[1].nsi.requester"),
        ({"timeout": 0}, "domains[1].nsi.timeout"),
        ({"colour": "red"}, "domains[1].nsi.colour"),
        ({"stps": {"n1": f"{NET}:p1?vlan=1780", "n3": f"{NET}:p3"}}, "domains[1].nsi.stps.n1"),
        ({"stps": {"n1": "p1", "n3": f"{NET}:p3"}}, "domains[1].nsi.stps.n1"),
        ({"stps": {"n1": f"{NET}:p1"}}, "domains[1].nsi.stps"),  # n3 is a border node too
        ({"stps": {"n1": f"{NET}:p1", "n3": f"{NET}:p3", "a-edge": f"{NET}:p2"}},
         "domains[1].nsi.stps.a-edge"),
    ],
)  # fmt: skip
def test_a_bad_nsi_entry_is_refused_naming_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(TopologyError) as caught:
        global_view_from_dict(_with(change))
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("visible", True, "domains[1].visible"),
        ("agent", "127.0.0.1:7000", "domains[1].agent"),
        ("nsi", "http://x", "domains[1].nsi"),
    ],
)
def test_an_nsi_domain_has_no_agent_and_cannot_be_visible(key: str, value: Any, field: str) -> None:
    data = copy.deepcopy(BASE)
    data["domains"][1][key] = value
    with pytest.raises(TopologyError) as caught:
        global_view_from_dict(data)
    assert caught.value.field == field


def test_its_links_cannot_be_given_to_the_neighbour_and_others_have_no_nsi_entry() -> None:
    data = copy.deepcopy(BASE)
    data["links"][0]["owner"] = "site-a"
    with pytest.raises(TopologyError) as caught:
        global_view_from_dict(data)
    assert caught.value.field == "links[0].owner"
    data = copy.deepcopy(BASE)
    data["domains"][0]["nsi"] = BASE["domains"][1]["nsi"]
    with pytest.raises(TopologyError) as caught:
        global_view_from_dict(data)
    assert caught.value.field == "domains[0].nsi"


def test_a_neighbour_s_file_may_name_it_by_kind_but_an_orchestrator_needs_the_provider() -> None:
    data = copy.deepcopy(BASE)
    del data["domains"][1]["nsi"]
    view = global_view_from_dict(data)  # an agent's own file names its neighbours so
    with pytest.raises(TopologyError) as caught:
        nsi_peers(view)
    assert caught.value.field == "domains[1].nsi"


def test_a_hand_off_point_it_does_not_have_is_an_error() -> None:
    view = global_view_from_dict(BASE)
    peer = nsi_peers(view)["onsa"]
    with pytest.raises(TopologyError) as caught:
        segment_stps(peer, view.nsi_ends("onsa"), "somewhere", "b-edge", 10**6)
    assert caught.value.field == "entry"


def test_two_nsi_domains_cannot_be_linked_directly() -> None:
    data = copy.deepcopy(BASE)
    data["domains"][2] = {**BASE["domains"][1], "id": "site-b"}  # site-b becomes an nsi domain
    data["domains"][2]["nsi"] = {**BASE["domains"][1]["nsi"], "stps": {"b-edge": f"{NET}:p9"}}
    with pytest.raises(TopologyError) as caught:
        global_view_from_dict(data)
    assert caught.value.field == "links[1]"
