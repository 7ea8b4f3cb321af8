"""Published domain views: one domain's own file, its abstract view, the merged global view."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.core.negotiation.domains import (
    MultiDomainNetwork,
    VlanRange,
    global_view_from_dict,
)
from braid.core.negotiation.published import domain_file_dict, domain_part, merge_parts

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "fig6a.yaml"


def network_of(data: dict[str, Any]) -> MultiDomainNetwork:
    return MultiDomainNetwork("test", data, global_view_from_dict(data))


@pytest.fixture
def fig6a() -> MultiDomainNetwork:
    return network_of(yaml.safe_load(EXAMPLE.read_text()))


def test_a_domains_own_file_publishes_what_the_single_file_gives_it(
    fig6a: MultiDomainNetwork,
) -> None:
    for domain in fig6a.view.domains:
        own = network_of(copy.deepcopy(domain_file_dict(fig6a, domain)))
        assert domain_part(own, domain) == domain_part(fig6a, domain)


def test_an_own_file_keeps_no_other_domains_insides(fig6a: MultiDomainNetwork) -> None:
    re1 = domain_file_dict(fig6a, "re1")
    assert {link["id"] for link in re1["links"]} == {"re1-core", "rn1-re1", "rn2-re1", "rn3-re1"}
    names = {n["id"]: n for n in re1["nodes"]}
    assert "a-dtn" not in names and names["rn1-sdx"] == {"id": "rn1-sdx", "domain": "rn1"}
    assert [d["id"] for d in re1["domains"]] == ["re1", "rn1", "rn2", "rn3"]


def test_the_merged_parts_are_the_global_view(fig6a: MultiDomainNetwork) -> None:
    parts = [domain_part(fig6a, d) for d in fig6a.view.domains]
    addresses = {d: spec.agent or "" for d, spec in fig6a.view.domains.items()}
    merged = merge_parts(parts, addresses)
    assert merged.view.links == fig6a.view.links
    assert merged.view.borders == fig6a.view.borders
    assert merged.view.domains == fig6a.view.domains
    assert merged.points["site-a"] == {"a-dtn", "a-edge"}
    assert merged.disagreements == ()


def test_a_link_waits_for_both_of_its_domains(fig6a: MultiDomainNetwork) -> None:
    parts = [domain_part(fig6a, d) for d in fig6a.view.domains if d != "re2"]
    merged = merge_parts(parts, {})
    assert "re2" not in merged.view.domains
    assert not {"rn1-re2", "rn2-re2", "rn3-re2"} & set(merged.view.links)
    assert "rn1-re1" in merged.view.links
    assert merged.view.domains["rn1"].agent is None


def test_where_the_ends_disagree_the_owners_word_stands(fig6a: MultiDomainNetwork) -> None:
    parts = {d: domain_part(fig6a, d) for d in fig6a.view.domains}
    site = parts["site-a"]
    narrowed = tuple(
        replace(link, vlans=VlanRange(150, 159)) if link.id == "a-rn1" else link
        for link in site.peerings
    )
    parts["site-a"] = replace(site, peerings=narrowed)
    merged = merge_parts(parts.values(), {})
    assert merged.view.links["a-rn1"].vlans == VlanRange(100, 199)  # rn1 owns it
    assert merged.disagreements == ("a-rn1",)
    parts["rn1"] = replace(parts["rn1"], peerings=())  # rn1 drops it: gone
    assert "a-rn1" not in merge_parts(parts.values(), {}).view.links


def test_the_version_follows_every_published_change(fig6a: MultiDomainNetwork) -> None:
    part = domain_part(fig6a, "rn3")
    assert part.version == domain_part(fig6a, "rn3").version
    assert replace(part, visible=True).version != part.version
    wider = tuple(replace(link, capacity=link.capacity * 2) for link in part.peerings)
    assert replace(part, peerings=wider).version != part.version
