"""What the circuit check and the delivery counters need of a switch, whoever drives it.

Both read the counters of braid's flows (and meters); the check also
injects frames. `SwitchStats` is that much of a switch: `OfctlStats` does
it with `ovs-ofctl` on the switch's host, `ControllerStats` through
`braid controller`'s API, and `StatsFleet` sends each switch's requests to
the one that drives it, so a wiring that mixes drivers is checked and
measured on every switch. The logic above them (`circuit_probe`,
`counters`) is written once, over this protocol.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from braid.app.provisioning.ports import SwitchError
from braid.core.delivery.samples import PacketsBytes
from braid.core.provisioning.circuit_check import CounterKey
from braid.core.rules.model import UNTAGGED, Action, Match

__all__ = [
    "FlowCount",
    "FlowKey",
    "StatsFleet",
    "SwitchStats",
    "label_counters",
]

FlowKey = tuple[int, int, int, Match]
"""What tells one of braid's flows from another on a switch: (cookie, table, priority, match)."""


@dataclass(frozen=True, slots=True)
class FlowCount:
    """One flow entry's identity and its cumulative counters, as the switch reports them."""

    cookie: int
    table_id: int
    priority: int
    match: Match
    packets: int
    bytes: int

    @property
    def key(self) -> FlowKey:
        return (self.cookie, self.table_id, self.priority, self.match)


class SwitchStats(Protocol):
    """Counters and packet-outs of switches, by name; every call raises `SwitchError`
    naming the switch it could not use."""

    def flow_counts(self, switch: str, cookie: int, mask: int) -> list[FlowCount]:
        """The flows whose cookie, masked by `mask`, equals `cookie`, with their counters."""
        ...

    def meter_counts(self, switch: str) -> dict[int, PacketsBytes]:
        """Per meter id, the packets and bytes its bands counted (summed over the bands)."""
        ...

    def packet_out(self, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]) -> None:
        """Send each of `frames` from the switch itself through `actions` (no table lookup)."""
        ...


class StatsFleet:
    """`SwitchStats` over several: each switch's calls go to the one in `by_switch`."""

    def __init__(self, by_switch: Mapping[str, SwitchStats]) -> None:
        self.by_switch = dict(by_switch)

    def flow_counts(self, switch: str, cookie: int, mask: int) -> list[FlowCount]:
        return self._of(switch).flow_counts(switch, cookie, mask)

    def meter_counts(self, switch: str) -> dict[int, PacketsBytes]:
        return self._of(switch).meter_counts(switch)

    def packet_out(self, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]) -> None:
        self._of(switch).packet_out(switch, actions, frames)

    def _of(self, switch: str) -> SwitchStats:
        stats = self.by_switch.get(switch)
        if stats is None:
            raise SwitchError(switch, "not in the wiring: braid has no way to read it")
        return stats


def label_counters(switch: str, flows: Iterable[FlowCount]) -> dict[CounterKey, int]:
    """(switch, in_port, VLAN) -> packets of every flow matching a port and a VLAN (the
    label rules: two reservations' rules never share a VLAN on a port)."""
    found: dict[CounterKey, int] = {}
    for flow in flows:
        port, vlan = flow.match.in_port, flow.match.vlan_vid
        if port is not None and vlan is not None and vlan != UNTAGGED:
            key = (switch, port, vlan)
            found[key] = found.get(key, 0) + flow.packets
    return found
