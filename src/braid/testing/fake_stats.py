"""A fake network's switches as `SwitchStats`: their counters, and packet-outs over its links.

What the circuit check and the delivery counters run on in tests: the same
`CircuitProbe` and `SwitchCounters` as on real switches, over switches that
evaluate their tables. The fake switches count every packet a flow matches
(`FakeSwitch.flow_counts`) but, having no clock, their meters drop nothing;
a test that wants policing drops sets them in `dropped` (by switch and
meter id). `refuse` makes a switch fail to answer, as an unreachable one
would.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from braid.adapters.southbound.switch_stats import FlowCount
from braid.app.provisioning.ports import SwitchError
from braid.core.delivery.samples import PacketsBytes
from braid.core.errors import InputError
from braid.core.rules.model import Action, Output, PushVlan
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import FakeSwitch, Packet

__all__ = ["FakeNetworkStats", "flow_counts", "send_frames"]


class FakeNetworkStats:
    """`SwitchStats` over `network`'s switches."""

    def __init__(self, network: FakeNetwork) -> None:
        self.network = network
        self.dropped: dict[tuple[str, int], PacketsBytes] = {}
        self.refuse: dict[str, str] = {}  # switch -> the error it answers with

    def flow_counts(self, switch: str, cookie: int, mask: int) -> list[FlowCount]:
        return flow_counts(self._switch(switch), cookie, mask)

    def meter_counts(self, switch: str) -> dict[int, PacketsBytes]:
        return {m: self.dropped.get((switch, m), (0, 0)) for m in self._switch(switch).meters}

    def packet_out(self, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]) -> None:
        self._switch(switch)
        send_frames(self.network, switch, actions, frames)

    def _switch(self, name: str) -> FakeSwitch:
        if name in self.refuse:
            raise SwitchError(name, self.refuse[name])
        found = self.network.switches.get(name)
        if found is None:
            raise SwitchError(name, "not in the fake network")
        return found


def flow_counts(switch: FakeSwitch, cookie: int, mask: int) -> list[FlowCount]:
    """The switch's flows whose cookie & mask == cookie & mask, with what they counted."""
    return [
        FlowCount(f.cookie, f.table_id, f.priority, f.match, *switch.flow_counts.get(k, (0, 0)))
        for k, f in switch.flows.items()
        if f.cookie & mask == cookie & mask
    ]


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
