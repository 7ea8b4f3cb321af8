"""Counting on the fake network: what arrives is what was offered, whatever the paths."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.app.provisioning.ports import SwitchError
from braid.core.delivery import Tally
from braid.testing.fake_counters import FakeDeliveryCounters
from tests.unit.core.rules.scenarios import (
    DST_IP,
    SRC_IP,
    Scenario,
    installed,
    scenarios,
    tcp,
    two_path_scenario,
)


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.lists(st.integers(64, 9000), min_size=1, max_size=20))
def test_every_byte_offered_is_delivered_in_a_lossless_network(
    scenario: Scenario, sizes: list[int]
) -> None:
    network, plan = installed(scenario)
    for i, size in enumerate(sizes):
        network.send("h1", replace(tcp(SRC_IP, DST_IP, 40000 + i, 5001), size=size))
    counters = FakeDeliveryCounters(network)
    counts = counters.read(plan, scenario.ports.host("h1"), scenario.ports.host("h2"))
    expected = Tally(len(sizes), sum(sizes), len(sizes), sum(sizes))
    assert counts.forward == expected
    assert counts.reverse == Tally()


def test_an_absent_flow_or_a_silent_switch_is_a_switch_error() -> None:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    counters = FakeDeliveryCounters(network)
    h1, h2 = scenario.ports.host("h1"), scenario.ports.host("h2")
    counters.refuse["s3"] = "no answer"
    with pytest.raises(SwitchError, match="no answer"):
        counters.read(plan, h1, h2)
    counters.refuse.clear()
    for rule_set in plan.entry:
        network.remove(rule_set)
    with pytest.raises(SwitchError, match="holds no flow"):
        counters.read(plan, h1, h2)
