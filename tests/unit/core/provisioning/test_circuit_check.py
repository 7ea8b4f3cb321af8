"""The circuit check on fake networks: healthy circuits verify, a broken hop is named."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.provisioning.circuit_check import (
    CheckResult,
    Hop,
    circuit_probes,
    judge,
)
from braid.core.provisioning.probe_frame import PROBE_MAGIC, PROBE_UDP_PORT, probe_frame
from braid.core.rules.model import RuleSet
from braid.testing.fake_probe import FakeCircuitChecker, fake_counters, send_probes
from tests.unit.core.rules.scenarios import (
    DST_IP,
    SRC_IP,
    Scenario,
    installed,
    scenarios,
    two_path_scenario,
)


def test_the_probes_follow_each_path_both_ways_hop_by_hop() -> None:
    scenario = two_path_scenario(standby=True)
    _, plan = installed(scenario)
    probes = circuit_probes(plan, scenario.ports, count=5)
    ports = scenario.ports
    routes = {p.name: [(h.previous, h.link, h.switch) for h in p.hops] for p in probes.probes}
    upper, lower, standby = plan.labels
    assert routes == {
        f"path 0 (VLAN {upper}) h1→h2": [("s1", "l12", "s2"), ("s2", "l23", "s3")],
        f"path 1 (VLAN {lower}) h1→h2": [("s1", "l14", "s4"), ("s4", "l43", "s3")],
        f"standby (VLAN {standby}) h1→h2": [("s1", "l13", "s3")],
        f"path 0 (VLAN {upper}) h2→h1": [("s3", "l23", "s2"), ("s2", "l12", "s1")],
        f"path 1 (VLAN {lower}) h2→h1": [("s3", "l43", "s4"), ("s4", "l14", "s1")],
        f"standby (VLAN {standby}) h2→h1": [("s3", "l13", "s1")],
    }
    first = probes.probes[0]
    assert first.out_port == ports.link_port("s1", "l12")
    assert first.hops[0] == Hop("s2", ports.link_port("s2", "l12"), upper, "l12", "s1")
    assert probes.switches() == ("s1", "s2", "s3", "s4")


def test_a_healthy_reservation_is_verified() -> None:
    scenario = two_path_scenario(standby=True)
    network, plan = installed(scenario)
    result = FakeCircuitChecker(network, scenario.ports, count=20).check([plan])[0]
    assert result.verified
    assert len(result.paths) == 6
    assert all(p.passed == len(p.probe.hops) for p in result.paths)
    assert result.text() == "6 path directions verified, 20 probes each"


def test_a_deleted_core_rule_is_where_the_probes_were_lost() -> None:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    upper = plan.vlans[0]
    s2 = network.switches["s2"]
    forward = next(
        f
        for f in s2.flows.values()
        if f.match.vlan_vid == upper and f.match.in_port == scenario.ports.link_port("s2", "l12")
    )
    network.remove(RuleSet.of("s2", s2.dpid, [forward]))
    result = FakeCircuitChecker(network, scenario.ports).check([plan])[0]
    assert not result.verified
    [failure] = result.failures
    assert failure.probe.name == f"path 0 (VLAN {upper}) h1→h2"
    assert failure.lost_at is not None and failure.lost_at.switch == "s2"
    assert failure.missing_rule and failure.passed == 0
    assert result.text() == (
        f"path 0 (VLAN {upper}) h1→h2: lost at s2 "
        f"(no rule for in_port {forward.match.in_port}, VLAN {upper})"
    )


def test_a_dead_link_loses_the_probes_between_its_two_switches() -> None:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    network.set_link("l23", up=False)
    result = FakeCircuitChecker(network, scenario.ports, count=20).check([plan])[0]
    texts = [p.text(20) for p in result.failures]
    upper = plan.vlans[0]
    assert texts == [
        f"path 0 (VLAN {upper}) h1→h2: 20 of 20 probes lost between s2 and s3 (link l23)",
        f"path 0 (VLAN {upper}) h2→h1: 20 of 20 probes lost between s3 and s2 (link l23)",
    ]
    assert [p.passed for p in result.failures] == [1, 0]


def test_a_partial_loss_says_how_many_were_lost() -> None:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    probes = circuit_probes(plan, scenario.ports, count=20)
    before = fake_counters(network, probes)
    send_probes(network, probes)
    after = dict(fake_counters(network, probes))
    last = probes.probes[0].hops[-1]
    after[last.key] -= 7
    result = judge(probes, before, after)
    [failure] = result.failures
    assert failure.arrived == 13 and failure.passed == 1
    assert "7 of 20 probes lost between s2 and s3 (link l23)" in result.text()


def test_nothing_installed_is_not_verified() -> None:
    assert not CheckResult("r1", 20, ()).verified
    assert CheckResult("r1", 20, ()).text() == "nothing to probe"


def test_a_probe_count_must_be_positive() -> None:
    scenario = two_path_scenario()
    _, plan = installed(scenario)
    with pytest.raises(InputError, match=r"probes\.count"):
        circuit_probes(plan, scenario.ports, count=0)


@settings(max_examples=60, deadline=None)
@given(scenarios(), st.data())
def test_removing_any_label_rule_is_reported_at_its_hop_and_only_there(
    scenario: Scenario, data: st.DataObject
) -> None:
    network, plan = installed(scenario)
    checker = FakeCircuitChecker(network, scenario.ports, count=3)
    assert checker.check([plan])[0].verified
    probes = circuit_probes(plan, scenario.ports, count=3)
    assert len(probes.probes) == 2 * len(plan.labels)
    for probe in probes.probes:
        route = [probe.switch, *(h.switch for h in probe.hops)]
        assert route[0] == probe.src.switch and route[-1] == probe.dst.switch
        assert len(set(route)) == len(route)  # simple
    victim = data.draw(st.sampled_from([h for p in probes.probes for h in p.hops]))
    switch = network.switches[victim.switch]
    rule = next(
        f
        for f in switch.flows.values()
        if (f.match.in_port, f.match.vlan_vid) == (victim.in_port, victim.vlan)
    )
    network.remove(RuleSet.of(victim.switch, switch.dpid, [rule]))
    result = checker.check([plan])[0]
    assert not result.verified
    for checked in result.paths:
        through = victim in checked.probe.hops
        assert checked.delivered is not through
        if through:
            assert checked.lost_at == victim and checked.missing_rule


def test_the_probe_frame_is_udp_between_the_hosts_with_a_valid_checksum() -> None:
    frame = probe_frame(SRC_IP, DST_IP, 3)
    assert len(frame) == 60
    ip = frame[14:34]
    assert sum(struct.unpack("!10H", ip)) % 0xFFFF == 0
    assert ip[12:16] == bytes([10, 0, 0, 1]) and ip[16:20] == bytes([10, 0, 0, 2])
    assert ip[9] == 17
    assert struct.unpack("!HH", frame[34:38]) == (PROBE_UDP_PORT, PROBE_UDP_PORT)
    assert frame[42:].startswith(PROBE_MAGIC + b"\x00\x03")
    assert frame[0:6] != frame[6:12]


@pytest.mark.parametrize(
    ("src", "tag", "field"), [("10.0.0", 1, "probe.ipv4_src"), (SRC_IP, -1, "probe.tag")]
)
def test_a_bad_probe_frame_input_names_its_field(src: str, tag: int, field: str) -> None:
    with pytest.raises(InputError, match=field):
        probe_frame(src, DST_IP, tag)
