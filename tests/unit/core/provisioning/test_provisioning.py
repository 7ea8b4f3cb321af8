"""When rules belong in the switches, and whole-table changes that never strand a flow."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.booking import Allocation
from braid.core.model.paths import Path
from braid.core.planning.lifecycle import State
from braid.core.provisioning.changes import table_changes
from braid.core.provisioning.schedule import Window, next_change, wanted
from braid.core.provisioning.status import Phase, Status, backoff, settled
from braid.core.rules.calendar import LabelCalendar
from braid.core.rules.compiler import compile_reservation, group_count
from braid.core.rules.model import RulePlan, RuleRequest, RuleSet, StepKind, merge_rule_sets
from braid.testing.fake_network import FakeNetwork
from tests.unit.core.rules.scenarios import (
    BYSTANDER_IP,
    DST_IP,
    SRC_IP,
    only,
    tcp,
    two_path_scenario,
)

LEAD = 5


def test_rules_are_wanted_from_the_lead_before_start_until_the_end() -> None:
    w = Window(State.RESERVED, 100, 200)
    assert [wanted(w, t, LEAD) for t in (94, 95, 150, 199, 200)] == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert not wanted(Window(State.HELD, 100, 200, 150), 120, LEAD)  # not confirmed yet
    assert not wanted(Window(State.CANCELLED, 100, 200), 150, LEAD)
    assert next_change([w, Window(State.RESERVED, 130, 140)], 96, LEAD) == 125
    assert next_change([w], 200, LEAD) is None


def test_a_profile_s_step_starts_are_changes_inside_the_window() -> None:
    stepped = Window(State.RESERVED, 100, 200, steps=(130, 170))
    assert [next_change([stepped], t, LEAD) for t in (90, 95, 130, 169, 170)] == [
        95,
        130,
        170,
        170,
        200,
    ]
    assert all(wanted(stepped, t, LEAD) for t in (95, 130, 170, 199))


def test_a_pass_settles_the_state() -> None:
    before = Status(Phase.INSTALLED, since=1)
    assert settled(True, ["s1"], {}, None, 5).phase is Phase.INSTALLED
    failed = settled(True, ["s1", "s2"], {"s2": "refused"}, before, 5)
    assert (failed.phase, failed.switch, failed.error) == (Phase.FAILED, "s2", "refused")
    assert settled(False, ["s1"], {}, before, 9).phase is Phase.REMOVED
    assert settled(False, ["s1"], {}, None, 9).phase is Phase.SCHEDULED
    assert [backoff(n) for n in (0, 1, 2, 3, 10)] == [0, 1, 2, 4, 60]


def _plans() -> tuple[FakeNetwork, dict[str, RulePlan]]:
    """r1: h1-h2 over two paths; r1b: r1 moved to the direct path; r3: h3-h2."""
    scenario = two_path_scenario(standby=False)
    topology, ports, request = scenario.topology, scenario.ports, scenario.request
    calendar = LabelCalendar.of(topology)
    direct = two_path_scenario(standby=True).request.standby
    assert direct is not None
    requests = {
        "r1": request,
        "r1b": RuleRequest("r1", (Allocation(direct, 100_000_000),), "h1", "h2"),
        "r3": RuleRequest("r3", (Allocation(Path(("s2", "s3"), ("l23",)), 10**8),), "h3", "h2"),
    }
    plans = {}
    for key, r in requests.items():
        paths = [a.path.links for a in r.allocations]
        labels = calendar.assign(key, (0, 10), paths, group_count(len(paths), False))
        calendar.record(key, (0, 10), paths, labels)
        plans[key] = compile_reservation(r, topology, ports, labels)
    return FakeNetwork(topology, ports), plans


def _tables(plans: list[RulePlan]) -> dict[str, RuleSet]:
    return merge_rule_sets(rs for p in plans for rs in p.rule_sets())


def _delivers(network: FakeNetwork, key: str) -> None:
    src_host, src_ip = ("h3", BYSTANDER_IP) if key == "r3" else ("h1", SRC_IP)
    only(network.send(src_host, tcp(src_ip, DST_IP, 40000, 5201)), "h2")
    only(network.send("h2", tcp(DST_IP, src_ip, 5201, 40000)), src_host)


@settings(max_examples=60, deadline=None)
@given(
    st.sets(st.sampled_from(["r1", "r1b", "r3"]), max_size=2).filter(
        lambda s: not {"r1", "r1b"} <= s
    ),
    st.sets(st.sampled_from(["r1", "r1b", "r3"]), max_size=2).filter(
        lambda s: not {"r1", "r1b"} <= s
    ),
)
def test_table_changes_reach_the_desired_tables_and_keep_every_kept_flow(
    before: set[str], after: set[str]
) -> None:
    network, plans = _plans()
    network.apply_all(rs for key in sorted(before) for rs in plans[key].rule_sets())
    dpids = {s: p.dpid for s, p in network.ports.switches.items()}
    desired = _tables([plans[k] for k in sorted(after)])
    changes = table_changes(network.dump(), desired, dpids)
    # A reservation carried before and after (r1 -> r1b is the same one, moved)
    # delivers after every single step.
    kept = {("r1" if k == "r1b" else k) for k in before} & {
        ("r1" if k == "r1b" else k) for k in after
    }
    for step in changes.steps:
        if step.kind is StepKind.APPLY:
            network.apply(step.rule_set)
        else:
            network.remove(step.rule_set)
        for key in kept:
            _delivers(network, key)
    assert {s: r for s, r in network.dump().items() if not r.empty} == {
        s: r for s, r in desired.items() if not r.empty
    }
    assert table_changes(network.dump(), desired, dpids).empty
