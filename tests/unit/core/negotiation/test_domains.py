"""The global view: domains, border links, owners, hand-off points, VLAN ranges."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.core.errors import TopologyError
from braid.core.negotiation.domains import (
    domain_topology_dict,
    global_view_from_dict,
    parse_vlan_range,
)
from braid.core.negotiation.routes import Leg, route_legs

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "fig6a.yaml"


@pytest.fixture
def fig6a() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    return data


def test_the_view_keeps_borders_and_inter_domain_links_only(fig6a: dict[str, Any]) -> None:
    view = global_view_from_dict(fig6a)
    assert set(view.domains) == {f"site-{s}" for s in "abcd"} | {"rn1", "rn2", "rn3", "re1", "re2"}
    assert "a-lan" not in view.links and "re1-core" not in view.links
    assert view.borders["site-a"] == {"a-edge"}
    assert "a-dtn" not in set().union(*view.borders.values())
    assert view.domains["rn3"].visible is False


def test_an_sdx_owns_its_links_and_the_far_end_is_the_hand_off(fig6a: dict[str, Any]) -> None:
    view = global_view_from_dict(fig6a)
    link = view.links["rn1-re1"]
    assert (link.owner, link.handoff) == ("rn1", "re1-west")
    assert 1000 in link.vlans and 1100 not in link.vlans


def test_an_explicit_owner_wins(fig6a: dict[str, Any]) -> None:
    fig6a["links"][4]["owner"] = "site-a"  # a-rn1
    link = global_view_from_dict(fig6a).links["a-rn1"]
    assert (link.owner, link.handoff) == ("site-a", "rn1-sdx")


def test_an_agent_serves_its_inside_plus_the_links_it_owns(fig6a: dict[str, Any]) -> None:
    view = global_view_from_dict(fig6a)
    rn1 = domain_topology_dict(fig6a, view, "rn1")
    assert {n["id"] for n in rn1["nodes"]} == {
        "rn1-sdx",
        "a-edge",
        "b-edge",
        "re1-west",
        "re2-west",
    }
    assert {link["id"] for link in rn1["links"]} == {"a-rn1", "b-rn1", "rn1-re1", "rn1-re2"}
    site = domain_topology_dict(fig6a, view, "site-a")
    assert [link["id"] for link in site["links"]] == ["a-lan"]


def test_route_legs_meet_at_hand_off_points(fig6a: dict[str, Any]) -> None:
    view = global_view_from_dict(fig6a)
    legs = route_legs(view, ("site-a", "rn1", "re2", "rn2", "site-c"), "a-dtn", "c-dtn")
    assert legs == (
        Leg("site-a", "a-dtn", "a-edge"),
        Leg("rn1", "a-edge", "re2-west"),
        Leg("re2", "re2-west", "re2-east"),
        Leg("rn2", "re2-east", "c-edge"),
        Leg("site-c", "c-edge", "c-dtn"),
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["domains"][0].update(kind="campus"), "domains[0].kind"),
        (lambda d: d["domains"][0].update(visible="yes"), "domains[0].visible"),
        (lambda d: d["domains"][0].update(agent="localhost"), "domains[0].agent"),
        (lambda d: d["domains"][1].update(id="site-a"), "domains[1].id"),
        (lambda d: d["nodes"][0].pop("domain"), "nodes[0].domain"),
        (lambda d: d["nodes"][0].update(domain="mars"), "nodes[0].domain"),
        (lambda d: d["links"][4].pop("vlans"), "links[4].vlans"),
        (lambda d: d["links"][4].update(vlans="300-200"), "links[4].vlans"),
        (lambda d: d["links"][4].update(vlans="0-10"), "links[4].vlans"),
        (lambda d: d["links"][4].update(owner="re1"), "links[4].owner"),
        (lambda d: d["links"][0].update(vlans="1-2"), "links[0].vlans"),
        (lambda d: d.pop("domains"), "domains"),
    ],
)
def test_bad_input_names_the_field(fig6a: dict[str, Any], change: Any, field: str) -> None:
    data = copy.deepcopy(fig6a)
    change(data)
    with pytest.raises(TopologyError) as caught:
        global_view_from_dict(data)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("text", "low", "high"), [("100-199", 100, 199), (42, 42, 42), ([1, 4094], 1, 4094)]
)
def test_vlan_ranges(text: object, low: int, high: int) -> None:
    span = parse_vlan_range(text, "vlans")
    assert (span.low, span.high) == (low, high)
