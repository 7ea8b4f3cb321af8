"""`SwitchStats` through `ovs-ofctl` on the switches' host (the direct driver's runner).

Flows with their counters come from `dump-flows BR cookie=C/M` (parsed as
the direct driver parses a dump, plus `n_packets`/`n_bytes`), meters' band
counts from `meter-stats BR`; a packet-out is one call carrying every frame:

    ovs-ofctl -O OpenFlow13 packet-out BR controller ACTIONS <hex frame>...

(the form taking several packets at once; Open vSwitch 3.1 reads no
packet-outs from stdin).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from braid.adapters.southbound.direct import CommandRunner, ofctl_runner
from braid.adapters.southbound.driver import naming_the_switch
from braid.adapters.southbound.ofctl_text import actions_text, parse_flow
from braid.adapters.southbound.switch_stats import FlowCount
from braid.app.provisioning.ports import SwitchError
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import Action

__all__ = ["OfctlStats", "parse_flow_counts", "parse_meter_counts"]

_COUNTER: Final = re.compile(r"\b(n_packets|n_bytes)=(\d+)")
_BAND: Final = re.compile(r"^\s*\d+:\s+packet_count:(\d+)\s+byte_count:(\d+)")
_METER: Final = re.compile(r"^meter:(\d+)\s")


class OfctlStats:
    """Reads and injects on the bridges named in `bridges` (switch name -> ovs-ofctl target)."""

    def __init__(self, bridges: Mapping[str, str], runner: CommandRunner | None = None) -> None:
        self.bridges = dict(bridges)
        self.run = runner or ofctl_runner()

    def flow_counts(self, switch: str, cookie: int, mask: int) -> list[FlowCount]:
        args = ["--no-names", "dump-flows", self._bridge(switch), f"cookie={cookie:#x}/{mask:#x}"]
        with naming_the_switch(switch):
            return parse_flow_counts(self.run(args))

    def meter_counts(self, switch: str) -> dict[int, PacketsBytes]:
        args = ["meter-stats", self._bridge(switch)]
        with naming_the_switch(switch):
            return parse_meter_counts(self.run(args))

    def packet_out(self, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]) -> None:
        bridge, packets = self._bridge(switch), [frame.hex() for frame in frames]
        with naming_the_switch(switch):
            self.run(["packet-out", bridge, "controller", actions_text(actions), *packets])

    def _bridge(self, switch: str) -> str:
        bridge = self.bridges.get(switch)
        if bridge is None:
            raise SwitchError(switch, "no bridge for it in the wiring")
        return bridge


def parse_flow_counts(text: str) -> list[FlowCount]:
    """Every flow of `dump-flows` output (with statistics, --no-names) and its counters."""
    found = []
    for line in text.splitlines():
        if " actions=" not in line:
            continue  # the reply's header line
        flow = parse_flow(line)
        counters = dict(_COUNTER.findall(line.partition(" actions=")[0]))
        found.append(
            FlowCount(
                flow.cookie,
                flow.table_id,
                flow.priority,
                flow.match,
                int(counters.get("n_packets", "0")),
                int(counters.get("n_bytes", "0")),
            )
        )
    return found


def parse_meter_counts(text: str) -> dict[int, PacketsBytes]:
    """Per meter id, its bands' (packets, bytes) summed, from `meter-stats` output."""
    found: dict[int, PacketsBytes] = {}
    meter: int | None = None
    for line in _lines(text):
        head = _METER.match(line)
        if head is not None:
            meter = int(head.group(1))
            found[meter] = (0, 0)
            continue
        band = _BAND.match(line)
        if band is not None and meter is not None:
            packets, size = found[meter]
            found[meter] = (packets + int(band.group(1)), size + int(band.group(2)))
    return found


def _lines(text: str) -> Iterable[str]:
    return (line for line in text.splitlines() if line.strip())
