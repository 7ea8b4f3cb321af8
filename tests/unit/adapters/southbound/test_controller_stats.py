"""The circuit check and delivery counters through `braid controller`'s API (a fake behind it),
and through a fleet mixing it with ovs-ofctl."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from braid.adapters.southbound import of13
from braid.adapters.southbound.circuit_probe import CircuitProbe
from braid.adapters.southbound.codec import (
    flow_counts_from_json,
    flow_counts_to_json,
    meter_counts_from_json,
    meter_counts_to_json,
    packet_out_from_json,
    packet_out_to_json,
)
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.controller_stats import ControllerStats
from braid.adapters.southbound.counters import SwitchCounters
from braid.adapters.southbound.http_api import make_server
from braid.adapters.southbound.ofctl_stats import OfctlStats
from braid.adapters.southbound.switch_stats import FlowCount, StatsFleet, SwitchStats
from braid.app.provisioning.ports import SwitchError
from braid.core.delivery import Tally
from braid.core.errors import InputError
from braid.core.rules.model import Match, Output, PushVlan, RulePlan, RuleSet
from braid.testing.fake_network import FakeNetwork
from tests.unit.adapters.southbound.test_circuit_probe import NetworkOfctl
from tests.unit.adapters.southbound.test_controller_api import FakeBackend
from tests.unit.core.rules.scenarios import (
    DST_IP,
    SRC_IP,
    Scenario,
    installed,
    tcp,
    two_path_scenario,
)


@dataclass
class Controlled:
    scenario: Scenario
    network: FakeNetwork
    plan: RulePlan
    backend: FakeBackend
    client: ControllerDriver

    @property
    def stats(self) -> ControllerStats:
        return ControllerStats(
            self.client, {s: p.dpid for s, p in self.scenario.ports.switches.items()}
        )

    def probe(self, stats: SwitchStats) -> CircuitProbe:
        return CircuitProbe(stats, self.scenario.ports, settle=0.0, sleep=lambda _: None)


@pytest.fixture
def controlled(tmp_path: Path) -> Iterator[Controlled]:
    scenario = two_path_scenario()
    network, plan = installed(scenario)
    backend = FakeBackend({}, network)
    address = f"unix:{tmp_path}/api.sock"
    server = make_server(backend, address)
    server.start()
    with ControllerDriver(address) as client:
        yield Controlled(scenario, network, plan, backend, client)
    server.stop()


def _drop_label_rule(network: FakeNetwork, switch: str, vlan: int) -> None:
    held = network.switches[switch]
    victim = next(f for f in held.flows.values() if f.match.vlan_vid == vlan)
    network.remove(RuleSet.of(switch, held.dpid, [victim]))


def test_a_check_through_the_controller_verifies_then_names_the_lost_hop(
    controlled: Controlled,
) -> None:
    probe = controlled.probe(controlled.stats)
    [healthy] = probe.check([controlled.plan])
    assert healthy.verified, healthy.text()
    _drop_label_rule(controlled.network, "s3", controlled.plan.vlans[1])
    [broken] = probe.check([controlled.plan])
    assert not broken.verified
    assert "lost at s3" in broken.text()


def test_a_fleet_mixing_drivers_checks_every_switch_through_its_own(
    controlled: Controlled,
) -> None:
    ofctl = NetworkOfctl(controlled.network)
    direct = OfctlStats({"s1": "s1", "s2": "s2"}, ofctl)
    via_controller = controlled.stats
    fleet = StatsFleet({"s1": direct, "s2": direct, "s3": via_controller, "s4": via_controller})
    probe = controlled.probe(fleet)
    assert probe.check([controlled.plan])[0].verified
    # The probes leave s1 (by ovs-ofctl); s2's counters are read by ovs-ofctl too.
    assert {c[1] if c[0] == "packet-out" else c[2] for c in ofctl.calls} == {"s1", "s2"}
    _drop_label_rule(controlled.network, "s2", controlled.plan.vlans[0])
    assert "lost at s2" in probe.check([controlled.plan])[0].text()


def test_delivery_counters_through_the_controller_move_with_traffic(
    controlled: Controlled,
) -> None:
    ports = controlled.scenario.ports
    h1, h2 = ports.host("h1"), ports.host("h2")
    counters = SwitchCounters(controlled.stats)
    before = counters.read(controlled.plan, h1, h2)
    for i in range(5):
        controlled.network.send("h1", replace(tcp(SRC_IP, DST_IP, 40000 + i, 5201), size=1000))
    after = counters.read(controlled.plan, h1, h2)
    assert before.forward == Tally()
    assert after.forward == Tally(5, 5000, 5, 5000)
    assert counters.read_all([(controlled.plan, h1, h2)]) == [after]


def test_a_switch_the_controller_does_not_hold_is_named(controlled: Controlled) -> None:
    controlled.backend.offline.add("s2")
    with pytest.raises(SwitchError, match=r"switch s2: .*not connected") as raised:
        controlled.stats.flow_counts("s2", 0, 0)
    assert raised.value.switch == "s2"
    response = controlled.client._client.get("/v1/switches/2/meters")
    assert response.status_code == 404
    assert "not connected" in response.json()["error"]
    controlled.backend.offline.add("s3")  # the receiver's switch, where delivery is counted
    ports = controlled.scenario.ports
    plans = [(controlled.plan, ports.host("h1"), ports.host("h2"))]
    [answer] = SwitchCounters(controlled.stats).read_all(plans)
    assert isinstance(answer, SwitchError) and answer.switch == "s3"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/switches/x/packet-out", {"frames": ["00" * 60]}, "dpid"),
        ("/v1/switches/1/packet-out", {"frames": []}, "packet_out.frames"),
        ("/v1/switches/1/packet-out", {"frames": ["zz"]}, "packet_out.frames[0]"),
        ("/v1/switches/1/packet-out", {"frames": ["00" * 4]}, "packet_out.frames[0]"),
        ("/v1/switches/1/packet-out", {"frames": ["00" * 60] * 1001}, "packet_out.frames"),
        ("/v1/switches/1/packet-out", {"frames": ["00" * 60], "actions": [{"type": "x"}]},
         "packet_out.actions[0].type"),
    ],
)  # fmt: skip
def test_a_bad_packet_out_is_refused_naming_the_field(
    controlled: Controlled, path: str, body: object, field: str
) -> None:
    before = {s: dict(sw.flow_counts) for s, sw in controlled.network.switches.items()}
    response = controlled.client._client.post(path, json=body)
    assert response.status_code == 400
    assert response.json()["error"].startswith(field)
    assert {s: dict(sw.flow_counts) for s, sw in controlled.network.switches.items()} == before


def test_bad_query_numbers_are_refused_naming_the_field(controlled: Controlled) -> None:
    for query, field in [({"cookie": "ten"}, "cookie"), ({"cookie_mask": "-1"}, "cookie_mask")]:
        response = controlled.client._client.get("/v1/switches/1/flows", params=query)
        assert response.status_code == 400
        assert response.json()["error"].startswith(field)


# --- the wire formats on both sides of the API ---


def test_counters_and_packet_outs_survive_json() -> None:
    flows = [FlowCount(0xB7A1 << 48 | 5, 0, 2000, Match(in_port=1, vlan_vid=7), 20, 1280)]
    assert flow_counts_from_json(flow_counts_to_json(flows)) == flows
    meters = {1: (75, 75_000), 3: (0, 0)}
    assert meter_counts_from_json(meter_counts_to_json(meters)) == meters
    actions, frames = (PushVlan(7), Output(2)), [bytes(range(60))]
    assert packet_out_from_json(packet_out_to_json(actions, frames)) == (actions, frames)
    with pytest.raises(InputError, match=r"body.flows\[0\].packets"):
        flow_counts_from_json({"flows": [{"cookie": 1, "table_id": 0, "priority": 1}]})


def test_os_ken_stats_replies_become_counts_and_probes_become_packet_outs() -> None:
    pytest.importorskip("os_ken")
    from os_ken.ofproto import ofproto_v1_3, ofproto_v1_3_parser

    datapath = SimpleNamespace(ofproto=ofproto_v1_3, ofproto_parser=ofproto_v1_3_parser)
    parser, ofp = ofproto_v1_3_parser, ofproto_v1_3
    match = Match(in_port=1, vlan_vid=7)
    stats = parser.OFPFlowStats(
        table_id=0, priority=2000, cookie=9, match=of13.match_to_of(parser, match),
        packet_count=20, byte_count=1280, instructions=[],
    )  # fmt: skip
    assert of13.flow_count_from_stats(stats) == FlowCount(9, 0, 2000, match, 20, 1280)
    bands = [parser.OFPMeterBandStats(3, 300), parser.OFPMeterBandStats(1, 100)]
    meters = [parser.OFPMeterStats(meter_id=4, band_stats=bands)]
    assert of13.meter_counts_from_stats(meters) == {4: (4, 400)}
    out = of13.packet_out(datapath, (PushVlan(7), Output(2)), b"frame")
    assert (out.in_port, out.buffer_id, out.data) == (
        ofp.OFPP_CONTROLLER,
        ofp.OFP_NO_BUFFER,
        b"frame",
    )
    assert [type(a).__name__ for a in out.actions] == [
        "OFPActionPushVlan", "OFPActionSetField", "OFPActionOutput",
    ]  # fmt: skip
    assert out.actions[1].value == 0x1000 | 7 and out.actions[2].port == 2
    request = of13.flow_stats_request(datapath, 0xB7A1 << 48, 0xFFFF << 48)
    assert (request.cookie, request.cookie_mask) == (0xB7A1 << 48, 0xFFFF << 48)
