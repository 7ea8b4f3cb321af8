"""`OfctlCounters`: a plan's flow and meter counters, read with `ovs-ofctl`.

Per switch the plan counts on, one `dump-flows BR cookie=C/-1` (the
reservation's own flows, with their statistics) and, where a meter polices
the entry rule, one `meter-stats BR`. Only what counting needs is parsed
from the text: a flow's table, priority and the match fields braid's entry
and label rules use, and its `n_packets`/`n_bytes`; a meter's band counts.
Within one reservation's cookie those fields tell its flows apart (the IPv4
and ARP entry rules differ in protocol, the label rules in port and VLAN).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from braid.adapters.southbound.direct import CommandRunner, ofctl_runner
from braid.adapters.southbound.driver import SouthboundError
from braid.app.provisioning.ports import Counts, SwitchError
from braid.core.delivery import CountedDirection, FlowRef, Tally, counted_flows, tally_of
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import ETH_TYPE_ARP, ETH_TYPE_IPV4, HostPort, Match, RulePlan

__all__ = ["OfctlCounters", "parse_flow_counts", "parse_meter_counts"]

# What identifies one of a reservation's flows in dump-flows text:
# (table, priority, protocol, in_port, dl_vlan, nw_src, nw_dst).
Signature = tuple[int, int, str | None, str | None, str | None, str | None, str | None]

_PROTOCOLS: Final = {ETH_TYPE_IPV4: "ip", ETH_TYPE_ARP: "arp"}
_BAND: Final = re.compile(r"^\s*\d+:\s+packet_count:(\d+)\s+byte_count:(\d+)")
_METER: Final = re.compile(r"^meter:(\d+)\s")


class OfctlCounters:
    """Reads bridges named in `bridges` (switch name -> ovs-ofctl target)."""

    def __init__(self, bridges: Mapping[str, str], runner: CommandRunner | None = None) -> None:
        self.bridges = dict(bridges)
        self.run = runner or ofctl_runner()

    def read(self, plan: RulePlan, src: HostPort, dst: HostPort) -> Counts:
        forward, reverse = counted_flows(plan, src, dst)
        refs = [*forward.flows, *reverse.flows]
        flows: dict[FlowRef, PacketsBytes] = {}
        for switch in sorted({ref.switch for ref in refs}):
            text = self._call(switch, ["--no-names", "dump-flows", self._target(switch),
                                       f"cookie={plan.cookie:#x}/-1"])  # fmt: skip
            found = parse_flow_counts(text)
            for ref in (r for r in refs if r.switch == switch):
                counts = found.get(_signature(ref))
                if counts is None:
                    raise SwitchError(switch, f"holds no flow {ref.match} of {plan.reservation_id}")
                flows[ref] = counts
        return Counts(self._tally(forward, flows), self._tally(reverse, flows))

    def _tally(self, direction: CountedDirection, flows: Mapping[FlowRef, PacketsBytes]) -> Tally:
        meters: dict[tuple[str, int], PacketsBytes] = {}
        if direction.meter is not None:
            switch, meter_id = direction.meter
            found = parse_meter_counts(
                self._call(switch, ["meter-stats", self._target(switch), f"meter={meter_id}"])
            )
            if meter_id not in found:
                raise SwitchError(switch, f"holds no meter {meter_id}")
            meters[direction.meter] = found[meter_id]
        return tally_of(direction, flows, meters)

    def _target(self, switch: str) -> str:
        target = self.bridges.get(switch)
        if target is None:
            raise SwitchError(switch, "no bridge for it in the wiring")
        return target

    def _call(self, switch: str, args: list[str]) -> str:
        try:
            return self.run(args)
        except SouthboundError as exc:
            raise SwitchError(switch, exc.message) from exc


def _signature(ref: FlowRef) -> Signature:
    m: Match = ref.match
    protocol = None if m.eth_type is None else _PROTOCOLS.get(m.eth_type, f"{m.eth_type:#06x}")
    return (
        ref.table_id,
        ref.priority,
        protocol,
        None if m.in_port is None else str(m.in_port),
        None if m.vlan_vid is None else str(m.vlan_vid),
        m.ipv4_src,
        m.ipv4_dst,
    )


def parse_flow_counts(text: str) -> dict[Signature, PacketsBytes]:
    """(packets, bytes) of every flow in `dump-flows` output (with stats, --no-names)."""
    found: dict[Signature, PacketsBytes] = {}
    for line in text.splitlines():
        head, sep, _ = line.strip().partition(" actions=")
        if not sep:
            continue  # the reply's header line
        fields: dict[str, str] = {}
        protocol = None
        for word in (w.strip() for w in head.split(",")):
            key, eq, value = word.partition("=")
            if eq:
                fields[key] = value
            elif word in ("ip", "arp"):
                protocol = word
        protocol = protocol or _dl_type(fields.get("dl_type"))
        signature: Signature = (
            int(fields.get("table", "0")),
            int(fields.get("priority", "32768")),
            protocol,
            fields.get("in_port"),
            fields.get("dl_vlan"),
            fields.get("nw_src") or fields.get("ip_src"),
            fields.get("nw_dst") or fields.get("ip_dst"),
        )
        found[signature] = (int(fields.get("n_packets", "0")), int(fields.get("n_bytes", "0")))
    return found


def _dl_type(value: str | None) -> str | None:
    if value is None:
        return None
    number = int(value, 0)
    return _PROTOCOLS.get(number, f"{number:#06x}")


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
