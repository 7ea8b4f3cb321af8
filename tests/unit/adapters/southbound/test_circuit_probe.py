"""The circuit probe through ovs-ofctl, against a stand-in `ovs-ofctl` over a fake network."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from braid.adapters.southbound.circuit_probe import CircuitProbe
from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.ofctl_stats import OfctlStats, parse_flow_counts
from braid.adapters.southbound.ofctl_text import actions_text, match_text, parse_actions
from braid.adapters.southbound.switch_stats import label_counters
from braid.app.provisioning.ports import SwitchError
from braid.core.rules.model import RuleSet
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_stats import flow_counts, send_frames
from tests.unit.core.rules.scenarios import installed, two_path_scenario

DUMP = """OFPST_FLOW reply (OF1.3) (xid=0x2):
 cookie=0xb7a1000000000001, duration=3.1s, table=0, n_packets=20, n_bytes=920, priority=2000,in_port=1,dl_vlan=10 actions=pop_vlan,output:2
 cookie=0xb7a1000000000001, duration=3.1s, table=0, n_packets=7, n_bytes=0, priority=3000,ip,in_port=3,nw_src=10.0.0.1,nw_dst=10.0.0.2 actions=group:192544768
"""  # noqa: E501


class NetworkOfctl:
    """`packet-out` and `dump-flows` as ovs-ofctl answers them, on a fake network."""

    def __init__(self, network: FakeNetwork, lag: int = 0) -> None:
        self.network = network
        self.lag = lag  # dumps that still show the counters from before the probes
        self.calls: list[list[str]] = []
        self._seen: dict[str, str] = {}

    def __call__(self, args: Sequence[str], stdin: str | None = None) -> str:
        args = list(args)
        self.calls.append(args)
        words = [a for a in args if not a.startswith("--")]
        if words[0] == "packet-out":
            _, bridge, in_port, actions, *frames = words
            assert in_port == "controller"
            parsed = parse_actions(actions, actions)
            send_frames(self.network, bridge, parsed, [bytes.fromhex(f) for f in frames])
            return ""
        if words[0] == "dump-flows":
            value, mask = words[2].removeprefix("cookie=").split("/")
            bridge, cookie, mask_bits = words[1], int(value, 16), int(mask, 16)
            if self.lag and bridge in self._seen:
                self.lag -= 1
                return self._seen[bridge]
            self._seen[bridge] = self._dump(bridge, cookie, mask_bits)
            return self._seen[bridge]
        raise SouthboundError("", f"unknown command {words[0]}")

    def _dump(self, bridge: str, cookie: int, mask: int) -> str:
        switch = self.network.switches[bridge]
        actions = {k: actions_text(f.actions) for k, f in switch.flows.items()}
        rows = [
            f" cookie={f.cookie:#x}, duration=1.0s, table={f.table_id}, "
            f"n_packets={f.packets}, n_bytes={f.bytes}, priority={f.priority},"
            f"{match_text(f.match)} actions={actions[f.table_id, f.priority, f.match]}"
            for f in flow_counts(switch, cookie, mask)
        ]
        return "OFPST_FLOW reply (OF1.3) (xid=0x2):\n" + "\n".join(rows) + "\n"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def probe_for(
    network: FakeNetwork, lag: int = 0
) -> tuple[CircuitProbe, NetworkOfctl, Clock, OfctlStats]:
    scenario = two_path_scenario()
    ofctl, clock = NetworkOfctl(network, lag), Clock()
    stats = OfctlStats({s: s for s in scenario.ports.switches}, ofctl)
    probe = CircuitProbe(
        stats, scenario.ports, count=20, settle=1.0, poll=0.25, clock=clock, sleep=clock.sleep
    )
    return probe, ofctl, clock, stats


def test_counters_are_read_from_label_rules_only() -> None:
    assert label_counters("s2", parse_flow_counts(DUMP)) == {("s2", 1, 10): 20}


def test_one_packet_out_per_path_and_direction_carries_all_its_frames() -> None:
    network, plan = installed(two_path_scenario())
    probe, ofctl, clock, _ = probe_for(network)
    [result] = probe.check([plan])
    assert result.verified and clock.slept == []
    outs = [c for c in ofctl.calls if c[0] == "packet-out"]
    assert len(outs) == 4
    assert all(len(c) == 4 + 20 for c in outs)
    first = outs[0]
    assert first[1] == "s1"
    assert first[3] == f"push_vlan:0x8100,set_field:{0x1000 + plan.vlans[0]}->vlan_vid,output:1"
    dumps = [c for c in ofctl.calls if "dump-flows" in c]
    braid = "cookie=0xb7a1000000000000/0xffff000000000000"
    assert dumps[0] == ["--no-names", "dump-flows", "s1", braid]


def test_lagging_counters_are_read_again_until_the_probes_show() -> None:
    network, plan = installed(two_path_scenario())
    probe, _, clock, _ = probe_for(network, lag=3)
    assert probe.check([plan])[0].verified
    assert clock.slept == [0.25]


def test_a_lost_hop_is_reported_after_the_settle_time() -> None:
    network, plan = installed(two_path_scenario())
    s3 = network.switches["s3"]
    victim = next(f for f in s3.flows.values() if f.match.vlan_vid == plan.vlans[1])
    network.remove(RuleSet.of("s3", s3.dpid, [victim]))
    probe, _, clock, _ = probe_for(network)
    [result] = probe.check([plan])
    assert not result.verified
    assert clock.now >= 1.0 and len(clock.slept) == 4
    assert "lost at s3" in result.text()


def test_a_switch_that_cannot_be_read_is_named() -> None:
    network, plan = installed(two_path_scenario())
    probe, _, _, stats = probe_for(network)
    stats.bridges.pop("s4")
    with pytest.raises(SwitchError, match="switch s4"):
        probe.check([plan])
