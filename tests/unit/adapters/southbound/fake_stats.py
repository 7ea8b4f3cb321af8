"""Counters and packet-outs of the fake network's switches, as a real switch reports them."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from braid.adapters.southbound.switch_stats import FlowCount
from braid.core.delivery.samples import PacketsBytes
from braid.core.errors import InputError
from braid.core.rules.model import Action, Output, PushVlan
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import FakeSwitch, Packet


def flow_counts(switch: FakeSwitch, cookie: int, mask: int) -> list[FlowCount]:
    """The switch's flows whose cookie & mask == cookie & mask, with what they counted."""
    return [
        FlowCount(f.cookie, f.table_id, f.priority, f.match, *switch.flow_counts.get(k, (0, 0)))
        for k, f in switch.flows.items()
        if f.cookie & mask == cookie & mask
    ]


def meter_counts(switch: FakeSwitch) -> dict[int, PacketsBytes]:
    """Every meter held, with its bands' counts (a fake switch never drops for a meter)."""
    return dict.fromkeys(switch.meters, (0, 0))


def send_frames(
    network: FakeNetwork, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]
) -> None:
    """Each IPv4 frame sent out of `switch` as a probe is: tagged with a VLAN, out of a port."""
    match actions:
        case (PushVlan(vid), Output(port)):
            pass
        case _:
            raise InputError("actions", f"the fake sends tagged probes only, not {actions}")
    for raw in frames:
        src, dst = (str(ipaddress.IPv4Address(raw[i : i + 4])) for i in (26, 30))
        packet = Packet(0, vlan=vid, ipv4_src=src, ipv4_dst=dst, ip_proto=raw[23], size=len(raw))
        network.send_out(switch, port, packet)


class NetworkStats:
    """`SwitchStats` straight over a fake network (no driver in between)."""

    def __init__(self, network: FakeNetwork) -> None:
        self.network = network

    def flow_counts(self, switch: str, cookie: int, mask: int) -> list[FlowCount]:
        return flow_counts(self.network.switches[switch], cookie, mask)

    def meter_counts(self, switch: str) -> dict[int, PacketsBytes]:
        return meter_counts(self.network.switches[switch])

    def packet_out(self, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]) -> None:
        send_frames(self.network, switch, actions, frames)
