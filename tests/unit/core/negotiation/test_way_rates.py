"""Multi-domain enforcement: every way out carries its path share's rate, and each domain's
switches hold it with a queue per way (and, for hard policing, a meter where a site's
traffic comes in)."""

from __future__ import annotations

import dataclasses
from importlib import resources

import pytest
import yaml

from braid.core.negotiation.domain_rules import (
    LAN,
    SwitchWiring,
    abstract_ports,
    domain_rule_set,
    splits,
)
from braid.core.negotiation.domains import GlobalView, global_view_from_dict
from braid.core.negotiation.result_rules import (
    CommittedPath,
    SwitchPlan,
    committed_rule_plan,
    summarise,
)
from braid.core.negotiation.way_rates import with_way_rates
from braid.core.rules.enforcement import Policing, Queue, meter_kbps
from braid.core.rules.model import SetQueue
from tests.unit.core.negotiation.test_result_rules import SPLIT, G

SITE_A_EDGE, RN1 = "a-edge", "rn1-sdx"


@pytest.fixture(scope="module")
def view() -> GlobalView:
    text = (resources.files("braid.examples") / "fig6a.yaml").read_text(encoding="utf-8")
    return global_view_from_dict(yaml.safe_load(text))


def rated(view: GlobalView, policing: Policing = Policing.SOFT) -> dict[str, SwitchPlan]:
    plans = summarise(committed_rule_plan(view, "r1", SPLIT), view)
    return {p.switch: p for p in with_way_rates(plans, view, SPLIT, policing)}


def wiring_of(view: GlobalView, plan: SwitchPlan) -> tuple[SwitchWiring, dict[int, str]]:
    """Real ports 11, 12, ... for the switch's abstract ports; links at their capacity."""
    abstract = abstract_ports(view, plan.domain)[plan.switch]
    ports = {name: 10 + port for port, name in abstract.items()}
    capacities = {name: view.links[name].capacity for name in ports if name != LAN}
    return SwitchWiring(plan.switch, plan.dpid, ports, capacities), abstract


def test_each_way_towards_another_domain_carries_its_path_share(view: GlobalView) -> None:
    plans = rated(view)
    (push, *pops) = plans[SITE_A_EDGE].rules
    assert [(w.vlan, w.rate) for w in push.ways] == [(101, 3 * G), (102, 1 * G)]
    assert all(w.rate == 0 for p in pops for w in p.ways)  # towards the site's LAN
    rn1 = {(r.in_port, r.vlan): r.ways[0].rate for r in plans[RN1].rules}
    assert rn1 == {(1, 101): 3 * G, (1, 102): 1 * G, (3, 1002): 3 * G, (4, 1101): 1 * G}
    assert {p.policing for p in plans.values()} == {Policing.SOFT}


@pytest.mark.parametrize("policing", [Policing.SOFT, Policing.HARD])
def test_an_sdx_queues_every_way_out_at_its_share(view: GlobalView, policing: Policing) -> None:
    plan = rated(view, policing)[RN1]
    wiring, abstract = wiring_of(view, plan)
    rules = domain_rule_set(plan, "tx1", wiring, abstract, ())
    queues = {q.key: q for q in rules.queues}
    for rule in plan.rules:
        (way,) = rule.ways
        port = wiring.ports[abstract[way.port]]
        line = wiring.capacities[abstract[way.port]]
        share = min(way.rate, line)
        ceiling = share if policing is Policing.HARD else line
        assert queues[(port, way.vlan)] == Queue(port, way.vlan, share, ceiling, line)
    assert all(SetQueue in [type(a) for a in f.actions] for f in rules.flows)
    assert rules.meters == ()  # nothing comes in from a LAN at an SDX


def test_a_hard_site_edge_meters_what_comes_in_from_its_lan(view: GlobalView) -> None:
    plan = rated(view, Policing.HARD)[SITE_A_EDGE]
    wiring, abstract = wiring_of(view, plan)
    needed = splits(plan, abstract)
    assert needed == splits(plan) + 1  # the split's group, then the entry meter
    ids = tuple(0x0B7A_0000 + 10 * i for i in range(needed))
    rules = domain_rule_set(plan, "tx1", wiring, abstract, ids)
    (meter,) = rules.meters
    assert meter.rate_kbps == meter_kbps(4 * G)
    entry = [f for f in rules.flows if f.match.in_port == wiring.ports[LAN]]
    assert [f.meter_id for f in entry] == [meter.meter_id]
    soft = domain_rule_set(
        dataclasses.replace(plan, policing=Policing.SOFT), "tx1", wiring, abstract, ids[:1]
    )
    assert soft.meters == () and soft.queues


def test_a_plan_without_policing_or_capacities_only_routes(view: GlobalView) -> None:
    plan = dataclasses.replace(rated(view)[RN1], policing=None)
    wiring, abstract = wiring_of(view, plan)
    assert domain_rule_set(plan, "tx1", wiring, abstract, ()).queues == ()
    bare = dataclasses.replace(wiring, capacities={})
    assert domain_rule_set(rated(view)[RN1], "tx1", bare, abstract, ()).queues == ()


# Site A's edge is homed on two SDXs: its WAN ports must tell the two links apart.
DUAL_HOMED = {
    "domains": [
        {"id": "site-a", "kind": "site", "agent": "127.0.0.1:1"},
        {"id": "x1", "kind": "sdx", "agent": "127.0.0.1:2"},
        {"id": "x2", "kind": "sdx", "agent": "127.0.0.1:3"},
        {"id": "site-b", "kind": "site", "agent": "127.0.0.1:4"},
    ],
    "nodes": [
        {"id": "a-host", "domain": "site-a"},
        {"id": "a-edge", "domain": "site-a"},
        {"id": "x1-sw", "domain": "x1"},
        {"id": "x2-sw", "domain": "x2"},
        {"id": "b-edge", "domain": "site-b"},
        {"id": "b-host", "domain": "site-b"},
    ],
    "links": [
        {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "40G"},
        {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "40G"},
        {"id": "a-x1", "a": "a-edge", "b": "x1-sw", "capacity": "10G", "vlans": "100-199"},
        {"id": "a-x2", "a": "a-edge", "b": "x2-sw", "capacity": "10G", "vlans": "200-299"},
        {"id": "x1-b", "a": "x1-sw", "b": "b-edge", "capacity": "10G", "vlans": "300-399"},
        {"id": "x2-b", "a": "x2-sw", "b": "b-edge", "capacity": "10G", "vlans": "400-499"},
    ],
}


@pytest.mark.parametrize(
    ("sdx", "vlans", "port"),
    [("x1", {"a-x1": 150, "x1-b": 350}, 2), ("x2", {"a-x2": 250, "x2-b": 450}, 3)],
)
def test_a_dual_homed_site_sends_each_path_out_of_its_own_link(
    sdx: str, vlans: dict[str, int], port: int
) -> None:
    view = global_view_from_dict(DUAL_HOMED)
    path = CommittedPath(("site-a", sdx, "site-b"), 2 * G, vlans)
    plans = summarise(committed_rule_plan(view, "r1", [path]), view)
    edge = {p.switch: p for p in with_way_rates(plans, view, [path])}["a-edge"]
    (push, *_) = edge.rules
    assert [(w.port, w.vlan, w.rate) for w in push.ways] == [(port, vlans[f"a-{sdx}"], 2 * G)]
    assert abstract_ports(view, "site-a")["a-edge"][port] == f"a-{sdx}"
