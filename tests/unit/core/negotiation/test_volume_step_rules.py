"""A volume across domains is a run of steps, each a transaction with its own rule plan:
each step's rules hold that step's rates (queues per way, and for hard a meter at the
site's edge), and moving a switch from one step's rules to the next never leaves the
site's traffic without its entry rule or that rule without its meter."""

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
    preferred_group_id,
    splits,
)
from braid.core.negotiation.domains import GlobalView, global_view_from_dict
from braid.core.negotiation.result_rules import (
    SwitchPlan,
    committed_rule_plan,
    summarise,
)
from braid.core.negotiation.way_rates import with_way_rates
from braid.core.provisioning.changes import table_changes
from braid.core.rules.enforcement import Policing, meter_kbps
from braid.core.rules.model import RuleSet, StepKind
from braid.testing.fake_switch import FakeSwitch
from tests.unit.core.negotiation.test_result_rules import SPLIT, G

SITE_A_EDGE, RN1 = "a-edge", "rn1-sdx"
# The second step carries less on the west path; each step's Preps picked the same VLANs
# (the first step's are free again in the second's window).
STEPS = (SPLIT, [dataclasses.replace(SPLIT[0], bandwidth=1 * G), SPLIT[1]])


@pytest.fixture(scope="module")
def view() -> GlobalView:
    text = (resources.files("braid.examples") / "fig6a.yaml").read_text(encoding="utf-8")
    return global_view_from_dict(yaml.safe_load(text))


def step_rules(
    view: GlobalView, index: int, switch: str, policing: Policing
) -> tuple[RuleSet, SwitchWiring]:
    """Step `index`'s rules on `switch`, as its agent builds them: real ports 11, 12, ...,
    links at their capacity, group (and meter) ids hashed from the step's transaction."""
    tx = f"tx1.s{index}"
    paths = STEPS[index]
    plans = with_way_rates(summarise(committed_rule_plan(view, tx, paths), view), view, paths)
    plan: SwitchPlan = next(p for p in plans if p.switch == switch)
    plan = dataclasses.replace(plan, policing=policing)
    abstract = abstract_ports(view, plan.domain)[switch]
    ports = {name: 10 + port for port, name in abstract.items()}
    capacities = {name: view.links[name].capacity for name in ports if name != LAN}
    wiring = SwitchWiring(switch, plan.dpid, ports, capacities)
    ids = [preferred_group_id(tx, switch, i) for i in range(splits(plan, abstract))]
    return domain_rule_set(plan, tx, wiring, abstract, ids), wiring


def test_each_step_s_site_edge_meter_is_at_that_step_s_rate(view: GlobalView) -> None:
    first, wiring = step_rules(view, 0, SITE_A_EDGE, Policing.HARD)
    second, _ = step_rules(view, 1, SITE_A_EDGE, Policing.HARD)
    assert [m.rate_kbps for m in first.meters] == [meter_kbps(4 * G)]
    assert [m.rate_kbps for m in second.meters] == [meter_kbps(2 * G)]
    assert first.meters[0].meter_id != second.meters[0].meter_id  # ids are the step's own
    for rules in (first, second):
        (entry,) = [f for f in rules.flows if f.match.in_port == wiring.ports[LAN]]
        assert entry.meter_id == rules.meters[0].meter_id


@pytest.mark.parametrize("policing", [Policing.SOFT, Policing.HARD])
def test_each_step_s_queues_are_at_that_step_s_shares(view: GlobalView, policing: Policing) -> None:
    for index, paths in enumerate(STEPS):
        rules, wiring = step_rules(view, index, RN1, policing)
        shares = {
            (wiring.ports[link], vlan): path.bandwidth
            for path in paths
            for link, vlan in path.vlans.items()
            if link in wiring.ports
        }
        held = {q.key: q for q in rules.queues}
        assert {key: held[key].min_rate for key in shares} == shares, index
        hard = policing is Policing.HARD
        ceilings = {q.max_rate == (q.min_rate if hard else q.line_rate) for q in held.values()}
        assert ceilings == {True}
        assert rules.meters == ()  # an SDX meters nothing


@pytest.mark.parametrize("switch", [SITE_A_EDGE, RN1])
@pytest.mark.parametrize("policing", [Policing.SOFT, Policing.HARD])
def test_the_next_step_s_rules_replace_the_last_s_without_a_gap(
    view: GlobalView, switch: str, policing: Policing
) -> None:
    """At the step boundary the agent's pass turns the first step's rules into the
    second's: after every change the switch still steers the site's traffic, each entry
    through a meter it holds."""
    first, _ = step_rules(view, 0, switch, policing)
    second, _ = step_rules(view, 1, switch, policing)
    fake = FakeSwitch(switch, first.dpid)
    fake.apply(first)
    keys = {f.key for f in first.flows}
    changes = table_changes({switch: fake.dump()}, {switch: second}, {switch: first.dpid})
    assert not changes.empty
    for step in changes.steps:
        if step.kind is StepKind.APPLY:
            fake.apply(step.rule_set)
        else:
            fake.remove(step.rule_set)
        assert keys <= set(fake.flows), "a rule of the steered traffic went missing"
        assert all(f.meter_id is None or f.meter_id in fake.meters for f in fake.flows.values())
    assert fake.dump() == RuleSet.of(
        switch, first.dpid, second.flows, second.groups, second.meters, second.queues
    )
