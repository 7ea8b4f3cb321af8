"""Delivery counters through `ovs-ofctl`, on text real `ovs-ofctl` printed (Open vSwitch 3.1,
userspace datapath).

The text (`ofctl_counters_capture.txt`) was captured from two scratch
bridges holding exactly the plan `_plan()` compiles (hard policing at
100 kbit/s): 120 frames of 1000 bytes sent from h1 with `packet-out` (the
meter dropped 75), and 40 tagged frames arriving at h2's switch (1004 bytes
each as the egress rule counts them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from braid.adapters.southbound.counters import SwitchCounters
from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.ofctl_stats import OfctlStats, parse_flow_counts, parse_meter_counts
from braid.app.provisioning.ports import SwitchError
from braid.core.delivery import Tally
from braid.core.model.booking import Allocation
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import HostPort, Match, Policing, RulePlan, RuleRequest
from tests.unit.core.rules.scenarios import _line, port_map

CAPTURE = Path(__file__).with_name("ofctl_counters_capture.txt")


def _captured() -> dict[str, str]:
    """The capture's sections by their `### switch command` headings."""
    sections: dict[str, str] = {}
    heading = ""
    for line in CAPTURE.read_text().splitlines(keepends=True):
        if line.startswith("### "):
            heading = line[4:].strip()
            sections[heading] = ""
        else:
            sections[heading] += line
    return sections


CAPTURED = _captured()
FLOWS_A, METERS_A = CAPTURED["a dump-flows"], CAPTURED["a meter-stats"]
FLOWS_B, METERS_B = CAPTURED["b dump-flows"], CAPTURED["b meter-stats"]
OUTPUT = {
    ("dump-flows", "bdlva"): FLOWS_A,
    ("meter-stats", "bdlva"): METERS_A,
    ("dump-flows", "bdlvb"): FLOWS_B,
    ("meter-stats", "bdlvb"): METERS_B,
}
BRIDGES = {"a": "bdlva", "b": "bdlvb"}


class Runner:
    """Answers as ovs-ofctl did; records the calls."""

    def __init__(self, output: dict[tuple[str, str], str]) -> None:
        self.output = output
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, args: Sequence[str], stdin: str | None = None) -> str:
        self.calls.append(tuple(args))
        command, bridge = [a for a in args if not a.startswith("--")][:2]
        if (command, bridge) not in self.output:
            raise SouthboundError("", f"{bridge} is not a bridge or a socket")
        return self.output[(command, bridge)]


def counters_of(bridges: dict[str, str], runner: Runner) -> SwitchCounters:
    return SwitchCounters(OfctlStats(bridges, runner))


def _plan() -> tuple[RulePlan, HostPort, HostPort]:
    topology, a, b, paths = _line()
    ports = port_map(topology, {"h1": (a, "10.0.0.1"), "h2": (b, "10.0.0.2")})
    request = RuleRequest(
        "r-deliv", (Allocation(paths[0], 100_000),), "h1", "h2", policing=Policing.HARD
    )
    plan = compile_reservation(request, topology, ports)
    return plan, ports.host("h1"), ports.host("h2")


def test_the_counters_of_a_policed_plan() -> None:
    plan, h1, h2 = _plan()
    assert f"{plan.cookie:#x}" in FLOWS_A  # the capture is of this very plan
    runner = Runner(OUTPUT)
    counts = counters_of(BRIDGES, runner).read(plan, h1, h2)
    assert counts.forward == Tally(120, 120_000, 40, 40_000, 75, 75_000)
    assert counts.reverse == Tally()
    dumps = [c for c in runner.calls if "dump-flows" in c]
    assert [c[-1] for c in dumps] == [f"cookie={plan.cookie:#x}/{(1 << 64) - 1:#x}"] * 2


def test_a_pass_reads_each_switch_once_for_every_plan() -> None:
    plan, h1, h2 = _plan()
    runner = Runner(OUTPUT)
    counters = counters_of(BRIDGES, runner)
    answers = counters.read_all([(plan, h1, h2)] * 5)
    assert answers == [counters.read(plan, h1, h2)] * 5
    first_pass = runner.calls[:4]
    assert sorted(c[-1] if c[0] == "meter-stats" else c[-2] for c in first_pass) == [
        "bdlva", "bdlva", "bdlvb", "bdlvb",
    ]  # fmt: skip
    assert all("/0xffff000000000000" in c[-1] for c in first_pass if "dump-flows" in c)


def test_a_failing_switch_fails_only_the_plans_that_count_on_it() -> None:
    plan, h1, h2 = _plan()
    answers = counters_of({"a": "bdlva", "b": "gone"}, Runner(OUTPUT)).read_all([(plan, h1, h2)])
    assert isinstance(answers[0], SwitchError) and answers[0].switch == "b"
    assert counters_of(BRIDGES, Runner(OUTPUT)).read_all([]) == []


def test_a_missing_flow_names_the_switch() -> None:
    plan, h1, h2 = _plan()
    emptied = OUTPUT | {("dump-flows", "bdlvb"): "OFPST_FLOW reply (OF1.3) (xid=0x2):\n"}
    with pytest.raises(SwitchError) as raised:
        counters_of(BRIDGES, Runner(emptied)).read(plan, h1, h2)
    assert raised.value.switch == "b"


def test_a_missing_meter_names_the_switch() -> None:
    plan, h1, h2 = _plan()
    emptied = OUTPUT | {("meter-stats", "bdlva"): "OFPST_METER reply (OF1.3) (xid=0x2):\n"}
    with pytest.raises(SwitchError) as raised:
        counters_of(BRIDGES, Runner(emptied)).read(plan, h1, h2)
    assert raised.value.switch == "a"


def test_an_unreachable_bridge_names_the_switch() -> None:
    plan, h1, h2 = _plan()
    with pytest.raises(SwitchError) as raised:
        counters_of({"a": "bdlva", "b": "gone"}, Runner(OUTPUT)).read(plan, h1, h2)
    assert raised.value.switch == "b"
    assert "not a bridge" in raised.value.message
    with pytest.raises(SwitchError, match="no bridge"):
        counters_of({"a": "bdlva"}, Runner(OUTPUT)).read(plan, h1, h2)


def test_the_parsers_take_what_counting_needs() -> None:
    flows = {f.key: (f.packets, f.bytes) for f in parse_flow_counts(FLOWS_B)}
    cookie = _plan()[0].cookie
    assert flows[(cookie, 0, 2000, Match(in_port=1, vlan_vid=1))] == (40, 40_160)
    entry = Match(in_port=2, eth_type=0x0800, ipv4_src="10.0.0.2", ipv4_dst="10.0.0.1")
    assert flows[(cookie, 0, 3000, entry)] == (0, 0)
    assert len(flows) == 3
    assert parse_meter_counts(METERS_A) == {1: (75, 75_000)}
    two_bands = (
        "meter:9 flow_count:0 bands:\n"
        "0: packet_count:1 byte_count:10\n"
        "1: packet_count:2 byte_count:20\n"
    )
    assert parse_meter_counts(two_bands) == {9: (3, 30)}
