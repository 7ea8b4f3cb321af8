from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.southbound.desired import DesiredState
from braid.core.errors import InputError
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import FlowRule, Match, Output, RuleSet
from braid.core.rules.tables import difference
from tests.unit.core.rules.scenarios import two_path_scenario


def plan_sets() -> tuple[RuleSet, ...]:
    scenario = two_path_scenario(standby=True)
    return compile_reservation(scenario.request, scenario.topology, scenario.ports).rule_sets()


def test_the_desired_state_is_the_union_of_applied_minus_removed() -> None:
    state = DesiredState()
    sets = plan_sets()
    for rule_set in sets:
        state.add(rule_set)
    assert dict(state.tables()) == {r.switch: r for r in sets}
    for rule_set in sets:
        state.discard(rule_set)
    assert all(r.empty for r in state.tables().values())


def test_a_later_rule_with_the_same_key_replaces_the_earlier() -> None:
    state = DesiredState()
    state.add(RuleSet.of("s", 1, [FlowRule(5, Match(in_port=1), (Output(2),))]))
    state.add(RuleSet.of("s", 1, [FlowRule(5, Match(in_port=1), (Output(3),))]))
    assert state.get("s", 1).flows == (FlowRule(5, Match(in_port=1), (Output(3),)),)


def test_difference_adds_missing_rewrites_changed_and_deletes_extra() -> None:
    keep = FlowRule(5, Match(in_port=1), (Output(2),))
    changed_want = FlowRule(5, Match(in_port=2), (Output(1),))
    changed_have = FlowRule(5, Match(in_port=2), ())
    extra = FlowRule(5, Match(in_port=3), ())
    missing = FlowRule(5, Match(in_port=4), (Output(1),))
    actual = RuleSet.of("s", 1, [keep, changed_have, extra])
    desired = RuleSet.of("s", 1, [keep, changed_want, missing])
    add, delete = difference(actual, desired)
    assert set(add.flows) == {changed_want, missing}
    assert delete.flows == (extra,)


def test_the_state_survives_a_save_and_load(tmp_path: Path) -> None:
    state = DesiredState()
    for rule_set in plan_sets():
        state.add(rule_set)
    state.save(tmp_path / "state.json")
    assert dict(DesiredState.load(tmp_path / "state.json").tables()) == dict(state.tables())


def test_a_broken_state_file_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{")
    with pytest.raises(InputError, match=r"state\.json: not a saved desired state"):
        DesiredState.load(path)
