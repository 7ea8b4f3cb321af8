"""The pure parts of `braid emulate`, checked without root, Mininet or Open vSwitch.

(They run everywhere, without the end-to-end setup.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.adapters.emulation import sendbuffer
from braid.adapters.emulation.iperf import (
    ClientOptions,
    IperfError,
    client_argv,
    combine,
    parse_report,
)
from braid.adapters.emulation.network import HostSpec, link_mbps, plan_wiring
from braid.adapters.emulation.sendbuffer import BufferSettings
from braid.adapters.emulation.sweep import _BRIDGE_RE, _LINK_RE
from braid.adapters.southbound.switchd_buffer import parse_switchd_send_buffer
from braid.core.errors import InputError
from braid.core.model.booking import Allocation
from braid.core.model.topology import topology_from_dict
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.flow_pinning import pin_client_ports
from braid.core.rules.model import RuleRequest
from braid.emulation.experiments.multipath import parse_cases, parse_flows
from braid.emulation.experiments.sdx_split import sdx_topology
from braid.emulation.flow_counts import (
    PortRotation,
    apportion,
    fit_flows,
    placements,
    wire_factor,
)
from braid.emulation.session import path_of
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import Packet


def _report(intervals: list[tuple[float, float, bool]], streams: list[float]) -> str:
    return json.dumps(
        {
            "intervals": [
                {"sum": {"end": end, "bits_per_second": bps, "omitted": omitted}}
                for end, bps, omitted in intervals
            ],
            "end": {
                "streams": [{"receiver": {"bits_per_second": b}} for b in streams],
                "sum_sent": {"bits_per_second": 30e6, "retransmits": 4},
                "sum_received": {"bits_per_second": 29e6, "seconds": 2.0},
            },
        }
    )


def test_an_iperf3_report_reads_into_receiver_goodput_and_measured_intervals() -> None:
    result = parse_report(_report([(1.0, 5e6, True), (2.0, 31e6, False), (3.0, 29e6, False)],
                                  [14e6, 15e6]))  # fmt: skip
    assert result.received_mbps == 29.0
    assert result.retransmits == 4
    assert result.streams == 2
    assert result.stream_received_bps == (14e6, 15e6)
    assert result.interval_ends == (2.0, 3.0)  # the omitted warm-up second is left out
    assert result.interval_bps == (31e6, 29e6)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (json.dumps({"error": "unable to connect to server"}), "unable to connect"),
        ("iperf3: error - unable to send control message", "did not print JSON"),
        (json.dumps({"start": {}}), "no end.sum_received"),
        ("", "did not print JSON"),
    ],
)
def test_a_failed_iperf3_run_says_why(text: str, says: str) -> None:
    with pytest.raises(IperfError, match=says):
        parse_report(text)


def test_concurrent_runs_add_up_interval_by_interval() -> None:
    one = parse_report(_report([(1.0, 10e6, False), (2.0, 12e6, False)], [9e6]))
    two = parse_report(_report([(1.0, 1e6, False)], [2e6, 3e6]))
    both = combine([one, two])
    assert both.received_bps == 58e6
    assert both.streams == 3
    assert both.interval_bps == (11e6,)


@given(st.integers(0, 64), st.lists(st.integers(1, 1000), min_size=1, max_size=5))
def test_apportion_hands_out_every_flow_close_to_the_weights(
    flows: int, weights: list[int]
) -> None:
    counts = apportion(flows, weights)
    assert sum(counts) == flows
    total = sum(weights)
    if all(flows * w / total >= 1 for w in weights):
        assert all(abs(c - flows * w / total) < 1 for c, w in zip(counts, weights, strict=True))


@given(
    st.integers(1, 30),
    st.lists(st.integers(0, 40), min_size=1, max_size=4),
    st.lists(st.integers(0, 10), min_size=4, max_size=4),
)
def test_fit_flows_never_overfills_a_share_while_another_path_has_room(
    flows: int, units: list[int], spare_units: list[int]
) -> None:
    flow_bps = 2_000_000
    shares = [u * flow_bps // 2 for u in units]  # half-flow granularity
    spare = [s * flow_bps for s in spare_units[: len(shares)]]
    counts = fit_flows(flows, flow_bps, shares, spare)
    assert sum(counts) == flows and min(counts) >= 0
    if sum(shares) >= flows * flow_bps and sum(s // flow_bps for s in shares) >= flows:
        assert all(c * flow_bps <= s for c, s in zip(counts, shares, strict=True))


def test_a_tenant_short_of_whole_flows_on_its_main_path_spills_onto_unbooked_capacity() -> None:
    # TALON's T2 at scale 0.1, MTU 9000: path 0 has 9.84 Mbit/s left after T1, the sub-path
    # carries 10.31; ten flows of 2 Mbit/s goodput (2.016 on the wire) each.
    flow = 2e6 * wire_factor(9000)
    assert fit_flows(10, flow, [9_843_541, 10_312_918], [0, 19_687_082]) == [4, 6]


def test_port_rotation_never_hands_out_a_port_twice_in_a_row() -> None:
    rotation = PortRotation(range(1000, 1010))
    first, second = rotation.take(6), rotation.take(6)
    assert first == 1000
    assert second == 1000  # 1006..1011 would leave the range: start over
    assert rotation.take(4) == 1006
    with pytest.raises(InputError, match="streams"):
        rotation.take(11)


def test_wiring_numbers_every_port_once_and_names_what_the_sweep_removes() -> None:
    topology = topology_from_dict(sdx_topology(10_000_000, 20_000_000))
    wiring = plan_wiring(topology, [HostSpec("h1", "A"), HostSpec("h2", "B")])
    for node, ports in wiring.link_ports.items():
        host_ports = [h.port for h in wiring.hosts.values() if h.switch == node]
        used = [*ports.values(), *host_ports]
        assert sorted(used) == list(range(1, len(used) + 1))
    assert all(_BRIDGE_RE.match(b) for b in wiring.bridges.values())
    assert all(_LINK_RE.match(i) for pair in wiring.link_intfs.values() for i in pair)
    assert len({h.ipv4 for h in wiring.hosts.values()}) == 2
    with pytest.raises(InputError, match=r"hosts\.h9\.node"):
        plan_wiring(topology, [HostSpec("h9", "nowhere")])


def test_a_link_faster_than_htb_emulates_is_refused_naming_the_link() -> None:
    assert link_mbps(25_000_000, "L") == 25.0
    with pytest.raises(InputError, match=r"links\.L\.capacity"):
        link_mbps(2_000_000_000, "L")


def test_pinned_flows_take_their_path_both_ways_in_the_fake_network() -> None:
    topology = topology_from_dict(sdx_topology(10_000_000, 40_000_000))
    wiring = plan_wiring(topology, [HostSpec("h1", "A"), HostSpec("h2", "B")])
    ports = wiring.port_map()
    allocations = (
        Allocation(path_of(topology, ("A", "T1", "B")), 10_000_000),
        Allocation(path_of(topology, ("A", "T2", "B")), 40_000_000),
    )
    request = RuleRequest("r-1", allocations, "h1", "h2")
    plan = compile_reservation(request, topology, ports)
    pinned = placements([2, 3], 42000)
    network = FakeNetwork(topology, ports)
    network.apply_all([*plan.rule_sets(), *pin_client_ports(plan, request, ports, pinned)])
    h1, h2 = ports.host("h1"), ports.host("h2")
    for index, client_port in pinned:
        there = Packet(in_port=h1.port, ipv4_src=h1.ipv4, ipv4_dst=h2.ipv4, ip_proto=6,
                       tp_src=client_port, tp_dst=5201)  # fmt: skip
        back = Packet(in_port=h2.port, ipv4_src=h2.ipv4, ipv4_dst=h1.ipv4, ip_proto=6,
                      tp_src=5201, tp_dst=client_port)  # fmt: skip
        [forward] = network.send("h1", there)
        [reverse] = network.send("h2", back)
        assert forward.host == "h2" and reverse.host == "h1"
        assert forward.links == allocations[index].path.links
        assert reverse.links == allocations[index].path.links[::-1]
    assert pin_client_ports(plan, request, ports, ()) == ()
    with pytest.raises(InputError, match="path index 2"):
        pin_client_ports(plan, request, ports, [(2, 42000)])


_SS_PACKET_SOCKETS = """\
Netid State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess
p_raw UNCONN 0 0 *:be1-eth1 * users:(("ovs-vswitchd",pid=7,fd=40)) skmem:(r0,rb212992,t0,tb212992)
p_raw UNCONN 0 0 [0]:* * users:(("ovs-vswitchd",pid=7,fd=67)) skmem:(r0,rb212992,t0,tb16777216)
"""


def test_the_send_buffer_read_is_that_of_the_socket_bound_to_no_interface() -> None:
    assert parse_switchd_send_buffer(_SS_PACKET_SOCKETS) == 16777216
    bound_only = _SS_PACKET_SOCKETS.splitlines()[:2]
    assert parse_switchd_send_buffer("\n".join(bound_only)) is None


@given(default=st.integers(1, 2**26), ceiling=st.integers(1, 2**26), wanted=st.integers(1, 2**26))
def test_the_send_buffer_is_raised_to_what_is_wanted_and_never_lowered(
    default: int, ceiling: int, wanted: int
) -> None:
    raised = BufferSettings(default, ceiling).raised(wanted)
    assert raised.default == max(default, wanted)
    assert raised.ceiling == max(ceiling, raised.default)


def test_per_stream_pacing_reaches_iperf3_as_fq_rate() -> None:
    argv = client_argv("10.0.0.2", ClientOptions(10, streams=4, pacing_bps=5_000_000))
    assert argv[argv.index("--fq-rate") + 1] == "5000000"
    assert "--fq-rate" not in client_argv("10.0.0.2", ClientOptions(10))


@pytest.mark.parametrize(
    ("text", "wanted"), [("8,16,32", (8, 16, 32)), (" 16 ", (16,)), ("4,,8", (4, 8))]
)
def test_multipath_flow_counts_read_from_a_comma_list(text: str, wanted: tuple[int, ...]) -> None:
    assert parse_flows(text) == wanted


@pytest.mark.parametrize("text", ["", "8,x", "0", "8,500"])
def test_bad_multipath_flow_counts_name_the_field(text: str) -> None:
    with pytest.raises(InputError, match="flows"):
        parse_flows(text)


def test_multipath_cases_must_be_named_ones() -> None:
    assert parse_cases("3 paths, 2 equal") == ("3 paths", "2 equal")
    with pytest.raises(InputError, match="cases"):
        parse_cases("2 equal,4 paths")


@pytest.fixture
def sysctl_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    files = {"default": tmp_path / "wmem_default", "max": tmp_path / "wmem_max"}
    files["default"].write_text("212992\n")
    files["max"].write_text("212992\n")
    monkeypatch.setattr(sendbuffer, "WMEM_DEFAULT", files["default"])
    monkeypatch.setattr(sendbuffer, "WMEM_MAX", files["max"])
    monkeypatch.setattr(sendbuffer, "SAVED", tmp_path / "saved")
    return files


def test_a_session_raises_the_send_buffer_and_puts_it_back(sysctl_files: dict[str, Path]) -> None:
    with sendbuffer.raised_send_buffer(2**24) as in_effect:
        assert in_effect == 2**24
        assert sendbuffer.current_settings() == sendbuffer.BufferSettings(2**24, 2**24)
        assert sendbuffer.saved_settings() == sendbuffer.BufferSettings(212992, 212992)
    assert sendbuffer.current_settings() == sendbuffer.BufferSettings(212992, 212992)
    assert sendbuffer.saved_settings() is None


def test_a_killed_runs_raise_is_undone_by_the_next_run_and_by_clean(
    sysctl_files: dict[str, Path],
) -> None:
    with pytest.raises(KeyboardInterrupt), sendbuffer.raised_send_buffer(2**24):
        sendbuffer.SAVED.write_text("212992 212992\n")  # as if the process died here
        raise KeyboardInterrupt
    assert sendbuffer.current_settings().default == 212992
    sysctl_files["max"].write_text(f"{2**24}\n")
    sysctl_files["default"].write_text(f"{2**24}\n")
    sendbuffer.SAVED.write_text("212992 212992\n")
    with sendbuffer.raised_send_buffer(2**24):
        pass
    assert sendbuffer.current_settings() == sendbuffer.BufferSettings(212992, 212992)
    sysctl_files["default"].write_text(f"{2**23}\n")
    sendbuffer.SAVED.write_text("212992 212992\n")
    assert sendbuffer.restore_send_buffer() == sendbuffer.BufferSettings(212992, 212992)
    assert sendbuffer.current_settings().default == 212992
