"""The rule plan of a committed reservation: the agents' VLANs, weighted edge pools, mirrors."""

from __future__ import annotations

import random
from importlib import resources

import pytest
import yaml

from braid.core.errors import InputError
from braid.core.negotiation.domains import GlobalView, global_view_from_dict
from braid.core.negotiation.result_rules import (
    CommittedPath,
    SwitchRule,
    Way,
    committed_rule_plan,
    summarise,
)
from braid.core.negotiation.sdx_plan import edge_vlan
from braid.core.rules.flow_hash import FiveTuple

G = 10**9
WEST = {"a-rn1": 101, "rn1-re1": 1002, "rn3-re1": 1400, "d-rn3": 400}
EAST = {"a-rn1": 102, "rn1-re2": 1101, "rn3-re2": 1500, "d-rn3": 401}
SPLIT = [
    CommittedPath(("site-a", "rn1", "re1", "rn3", "site-d"), 3 * G, WEST),
    CommittedPath(("site-a", "rn1", "re2", "rn3", "site-d"), 1 * G, EAST),
]


@pytest.fixture(scope="module")
def view() -> GlobalView:
    text = (resources.files("braid.examples") / "fig6a.yaml").read_text(encoding="utf-8")
    return global_view_from_dict(yaml.safe_load(text))


def by_switch(view: GlobalView) -> dict[str, tuple[SwitchRule, ...]]:
    plan = committed_rule_plan(view, "r1", SPLIT)
    return {s.switch: s.rules for s in summarise(plan, view)}


def test_the_edges_split_over_the_agents_vlans_weighted_by_the_shares(view: GlobalView) -> None:
    rules = by_switch(view)
    (push, *pops) = rules["a-edge"]
    assert (push.in_port, push.vlan) == (1, 0)  # untagged from the site's LAN
    assert push.ways == (Way(2, 101, 3), Way(2, 102, 1))  # 3:1 as the paths' 3 and 1 Gbit/s
    assert {(p.vlan, p.ways) for p in pops} == {(101, (Way(1, 0),)), (102, (Way(1, 0),))}
    (far_push, *_) = rules["d-edge"]
    assert far_push.ways == (Way(2, 400, 3), Way(2, 401, 1))  # same order, same weights


def test_each_sdx_bridges_the_chosen_vlans_and_mirrors_them(view: GlobalView) -> None:
    rn1 = {(r.in_port, r.vlan): r.ways for r in by_switch(view)["rn1-sdx"]}
    # rn1's ports by link id: a-rn1 1, b-rn1 2, rn1-re1 3, rn1-re2 4
    assert rn1 == {
        (1, 101): (Way(3, 1002),),
        (1, 102): (Way(4, 1101),),
        (3, 1002): (Way(1, 101),),
        (4, 1101): (Way(1, 102),),
    }
    assert "re1-west" not in by_switch(view)  # WANs carry their own VLANs: no rules here


def test_a_flow_and_its_reply_take_the_same_path(view: GlobalView) -> None:
    plan = committed_rule_plan(view, "r1", SPLIT)
    rng = random.Random(7)
    for _ in range(200):
        flow = FiveTuple(
            f"10.0.0.{rng.randrange(1, 255)}", f"10.1.0.{rng.randrange(1, 255)}", 6,
            rng.randrange(1024, 65535), rng.randrange(1, 1024),
        )  # fmt: skip
        there = plan.edge_pool("site-a").index(edge_vlan(plan, "site-a", flow))
        back = plan.edge_pool("site-d").index(edge_vlan(plan, "site-d", flow.reversed()))
        assert there == back


def test_a_path_without_a_chosen_vlan_is_named(view: GlobalView) -> None:
    missing = dict(WEST)
    del missing["rn3-re1"]
    with pytest.raises(InputError, match=r"paths\[0\]\.vlans.*rn3-re1"):
        committed_rule_plan(view, "r1", [CommittedPath(SPLIT[0].domains, G, missing)])


def test_nothing_committed_is_no_plan(view: GlobalView) -> None:
    with pytest.raises(InputError, match="no path carries"):
        committed_rule_plan(view, "r1", [CommittedPath(SPLIT[0].domains, 0, WEST)])
