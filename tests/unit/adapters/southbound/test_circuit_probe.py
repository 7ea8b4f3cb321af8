"""The ovs-ofctl circuit probe against a stand-in `ovs-ofctl` over a fake network."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pytest

from braid.adapters.southbound.circuit_probe import OfctlCircuitProbe, read_counters
from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.ofctl_text import actions_text, match_text
from braid.app.provisioning.ports import SwitchError
from braid.core.rules.model import RuleSet
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import Packet
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
            self._send(bridge, actions, frames)
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

    def _send(self, bridge: str, actions: str, frames: list[str]) -> None:
        words = actions.split(",")
        assert words[0] == "push_vlan:0x8100"
        vid = int(words[1].removeprefix("set_field:").removesuffix("->vlan_vid")) - 0x1000
        port = int(words[2].removeprefix("output:"))
        for frame in frames:
            raw = bytes.fromhex(frame)
            src, dst = (str(ipaddress.IPv4Address(raw[i : i + 4])) for i in (26, 30))
            packet = Packet(0, vlan=vid, ipv4_src=src, ipv4_dst=dst, ip_proto=raw[23])
            self.network.send_out(bridge, port, packet)

    def _dump(self, bridge: str, cookie: int, mask: int) -> str:
        switch = self.network.switches[bridge]
        rows = [
            f" cookie={f.cookie:#x}, duration=1.0s, table=0, "
            f"n_packets={switch.flow_counts.get(k, (0, 0))[0]}, "
            f"n_bytes=0, priority={f.priority},{match_text(f.match)} "
            f"actions={actions_text(f.actions)}"
            for k, f in switch.flows.items()
            if f.cookie & mask == cookie
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


def probe_for(network: FakeNetwork, lag: int = 0) -> tuple[OfctlCircuitProbe, NetworkOfctl, Clock]:
    scenario = two_path_scenario()
    ofctl, clock = NetworkOfctl(network, lag), Clock()
    bridges = {s: s for s in scenario.ports.switches}
    probe = OfctlCircuitProbe(
        bridges, scenario.ports, ofctl, count=20, settle=1.0, poll=0.25,
        clock=clock, sleep=clock.sleep,
    )  # fmt: skip
    return probe, ofctl, clock


def test_counters_are_read_from_label_rules_only() -> None:
    assert read_counters("s2", DUMP) == {("s2", 1, 10): 20}


def test_one_packet_out_per_path_and_direction_carries_all_its_frames() -> None:
    network, plan = installed(two_path_scenario())
    probe, ofctl, clock = probe_for(network)
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
    probe, _, clock = probe_for(network, lag=3)
    assert probe.check([plan])[0].verified
    assert clock.slept == [0.25]


def test_a_lost_hop_is_reported_after_the_settle_time() -> None:
    network, plan = installed(two_path_scenario())
    s3 = network.switches["s3"]
    victim = next(f for f in s3.flows.values() if f.match.vlan_vid == plan.vlans[1])
    network.remove(RuleSet.of("s3", s3.dpid, [victim]))
    probe, _, clock = probe_for(network)
    [result] = probe.check([plan])
    assert not result.verified
    assert clock.now >= 1.0 and len(clock.slept) == 4
    assert "lost at s3" in result.text()


def test_a_switch_that_cannot_be_read_is_named() -> None:
    network, plan = installed(two_path_scenario())
    probe, _, _ = probe_for(network)
    probe.bridges.pop("s4")
    with pytest.raises(SwitchError, match="switch s4"):
        probe.check([plan])
