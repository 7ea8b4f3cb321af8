from typing import Any

import pytest

from braid.core.errors import InputError, TopologyError
from braid.core.model.topology import topology_from_dict, topology_to_dict


def base() -> dict[str, Any]:
    return {
        "nodes": [
            {"id": "A", "lat": 41.88, "lon": -87.63},
            {"id": "B", "lat": 40.71, "lon": -74.01},
            {"id": "C"},
        ],
        "links": [
            {"id": "A-B-1", "a": "A", "b": "B", "capacity": "100G"},
            {"id": "A-B-2", "a": "A", "b": "B", "capacity": 40000, "latency_ms": 9.5},
            {"id": "B-C", "a": "B", "b": "C", "capacity": "10G"},
        ],
    }


def test_parallel_links_and_latency_from_coordinates() -> None:
    topology = topology_from_dict(base())
    assert [h.link for h in topology.hops("A")] == ["A-B-1", "A-B-2"]
    # Chicago to New York is about 1,145 km: some 5.7 ms in fibre.
    assert 5.5 < topology.links["A-B-1"].latency_ms < 6.0
    assert topology.links["A-B-2"].latency_ms == 9.5
    assert topology.links["B-C"].latency_ms == 1.0  # default without coordinates
    assert topology.links["A-B-2"].capacity == 40 * 10**9


def test_export_gives_mbps() -> None:
    exported = topology_to_dict(topology_from_dict(base()))
    assert exported["v"] == 1
    assert exported["links"][0] == {
        "id": "A-B-1",
        "a": "A",
        "b": "B",
        "capacity": 100_000,
        "latency_ms": pytest.approx(5.73, abs=0.05),
    }


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda t: t["links"].append({"id": "X", "a": "A", "b": "Z", "capacity": 1}), "links[3].b"),
        (
            lambda t: t["links"].append({"id": "B-C", "a": "A", "b": "C", "capacity": 1}),
            "links[3].id",
        ),
        (lambda t: t["nodes"].append({"id": "A"}), "nodes[3].id"),
        (lambda t: t["links"][0].update(capacity=0), "links[0].capacity"),
        (lambda t: t["links"][0].update(capacity="fast"), "links[0].capacity"),
        (lambda t: t["links"][0].pop("capacity"), "links[0].capacity"),
        (lambda t: t["links"][0].update(b="A"), "links[0].b"),
        (lambda t: t["links"][0].update(latency_ms=-1), "links[0].latency_ms"),
        (lambda t: t["links"][0].update(colour="red"), "links[0].colour"),
        (lambda t: t["nodes"][0].update(lat=91), "nodes[0].lat"),
        (lambda t: t["links"][0].update(capacity="1e400G"), "links[0].capacity"),
        (lambda t: t["links"][0].update(capacity=float("inf")), "links[0].capacity"),
        (lambda t: t["links"][0].update(capacity=10**400), "links[0].capacity"),
        (lambda t: t["links"][0].update(latency_ms=float("nan")), "links[0].latency_ms"),
        (lambda t: t["links"][0].update(latency_ms=float("inf")), "links[0].latency_ms"),
        (lambda t: t["links"][0].update(latency_ms=1e400), "links[0].latency_ms"),
        (lambda t: t["nodes"][0].update(lat=float("nan")), "nodes[0].lat"),
        (lambda t: t["nodes"][0].update(lon=float("inf")), "nodes[0].lon"),
        (lambda t: t.update(domains=[{"id": "d", "kind": "cloud"}]), "domains[0].kind"),
        (
            lambda t: t["nodes"][0].update(domain="nowhere") or t.update(domains=[{"id": "d"}]),
            "nodes[0].domain",
        ),
        (lambda t: t.pop("links"), "links"),
    ],
)
def test_bad_topologies_name_the_field(change, field: str) -> None:  # type: ignore[no-untyped-def]
    data = base()
    change(data)
    with pytest.raises(TopologyError) as caught:
        topology_from_dict(data)
    assert caught.value.field == field


def test_default_capacity_fills_missing_speeds() -> None:
    data = base()
    data["links"][0].pop("capacity")
    topology = topology_from_dict(data, default_capacity_bps=123)
    assert topology.links["A-B-1"].capacity == 123


def test_an_unknown_node_comes_with_what_was_probably_meant() -> None:
    topology = topology_from_dict(
        {
            "nodes": [{"id": "ORNL"}, {"id": "7", "name": "Chicago"}],
            "links": [{"id": "l", "a": "ORNL", "b": "7", "capacity": 10}],
        }
    )
    hints = []
    for given in ("ornl", "ORNLL", "Chicago", "NOWHERE"):
        with pytest.raises(InputError) as caught:
            topology.require_node(given, "src")
        hints.append(caught.value.message)
    assert hints == [
        "unknown node 'ornl'; did you mean 'ORNL'?",
        "unknown node 'ORNLL'; did you mean 'ORNL'?",
        "unknown node 'Chicago'; the node named 'Chicago' has id '7'",
        "unknown node 'NOWHERE'",
    ]


def test_an_unknown_link_comes_with_the_closest_ids() -> None:
    topology = topology_from_dict(
        {
            "nodes": [{"id": "A"}, {"id": "B"}],
            "links": [{"id": "A-B-1", "a": "A", "b": "B", "capacity": 10}],
        }
    )
    assert topology.require_link("A-B-1", "link") == "A-B-1"
    with pytest.raises(InputError) as caught:
        topology.require_link("a-b-1", "link")
    assert caught.value.message == "unknown link 'a-b-1'; did you mean 'A-B-1'?"
    with pytest.raises(InputError) as caught:
        topology.require_link(7, "link")
    assert caught.value.field == "link"
