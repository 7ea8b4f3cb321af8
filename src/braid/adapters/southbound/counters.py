"""`OfctlCounters`: a plan's flow and meter counters, read with `ovs-ofctl`.

`read_all` reads every switch once for all the plans of a sampling pass:
one `dump-flows BR cookie=TAG/MASK` (braid's flows, with their statistics)
and, where a plan's meter sits, one `meter-stats BR`; so a pass costs two
`ovs-ofctl` calls per switch however many reservations there are (`read`,
for one plan, filters by the plan's cookie). Only what counting needs is
parsed from the text: a flow's cookie, table, priority and the match fields
braid's entry and label rules use, and its `n_packets`/`n_bytes`; a meter's
band counts. Within one cookie those fields tell a reservation's flows apart
(the IPv4 and ARP entry rules differ in protocol, the label rules in port
and VLAN).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from braid.adapters.southbound.direct import CommandRunner, ofctl_runner
from braid.adapters.southbound.driver import SouthboundError
from braid.app.provisioning.ports import Counts, SwitchError
from braid.core.delivery import CountedDirection, FlowRef, Tally, counted_flows, tally_of
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import (
    BRAID_COOKIE_MASK,
    BRAID_COOKIE_TAG,
    ETH_TYPE_ARP,
    ETH_TYPE_IPV4,
    HostPort,
    Match,
    RulePlan,
)

__all__ = ["OfctlCounters", "parse_flow_counts", "parse_meter_counts"]

# What identifies one of braid's flows in dump-flows text:
# (cookie, table, priority, protocol, in_port, dl_vlan, nw_src, nw_dst).
Signature = tuple[int, int, int, str | None, str | None, str | None, str | None, str | None]
Plans = Sequence[tuple[RulePlan, HostPort, HostPort]]

_PROTOCOLS: Final = {ETH_TYPE_IPV4: "ip", ETH_TYPE_ARP: "arp"}
_BAND: Final = re.compile(r"^\s*\d+:\s+packet_count:(\d+)\s+byte_count:(\d+)")
_METER: Final = re.compile(r"^meter:(\d+)\s")


class OfctlCounters:
    """Reads bridges named in `bridges` (switch name -> ovs-ofctl target)."""

    def __init__(self, bridges: Mapping[str, str], runner: CommandRunner | None = None) -> None:
        self.bridges = dict(bridges)
        self.run = runner or ofctl_runner()

    def read(self, plan: RulePlan, src: HostPort, dst: HostPort) -> Counts:
        answer = self._read([(plan, src, dst)], f"cookie={plan.cookie:#x}/-1")[0]
        if isinstance(answer, SwitchError):
            raise answer
        return answer

    def read_all(self, plans: Plans) -> list[Counts | SwitchError]:
        """Each plan's counts, or the error of the switch that failed it, in order."""
        return self._read(plans, f"cookie={BRAID_COOKIE_TAG:#x}/{BRAID_COOKIE_MASK:#x}")

    def _read(self, plans: Plans, cookie: str) -> list[Counts | SwitchError]:
        ways = [counted_flows(plan, src, dst) for plan, src, dst in plans]
        counting = {ref.switch for pair in ways for way in pair for ref in way.flows}
        metered = {way.meter[0] for pair in ways for way in pair if way.meter is not None}
        read = _Read(
            {switch: self._flow_counts(switch, cookie) for switch in sorted(counting)},
            {switch: self._meter_counts(switch) for switch in sorted(metered)},
        )
        answers: list[Counts | SwitchError] = []
        for (plan, _, _), (forward, reverse) in zip(plans, ways, strict=True):
            try:
                answers.append(Counts(read.tally(plan, forward), read.tally(plan, reverse)))
            except SwitchError as exc:
                answers.append(exc)
        return answers

    def _flow_counts(self, switch: str, cookie: str) -> dict[Signature, PacketsBytes] | SwitchError:
        try:
            text = self._call(switch, ["--no-names", "dump-flows", self._target(switch), cookie])
        except SwitchError as exc:
            return exc
        return parse_flow_counts(text)

    def _meter_counts(self, switch: str) -> dict[int, PacketsBytes] | SwitchError:
        try:
            return parse_meter_counts(self._call(switch, ["meter-stats", self._target(switch)]))
        except SwitchError as exc:
            return exc

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


@dataclass(frozen=True, slots=True)
class _Read:
    """What one pass read from each switch (or the switch's error)."""

    flows: Mapping[str, dict[Signature, PacketsBytes] | SwitchError]
    meters: Mapping[str, dict[int, PacketsBytes] | SwitchError]

    def tally(self, plan: RulePlan, direction: CountedDirection) -> Tally:
        flows: dict[FlowRef, PacketsBytes] = {}
        for ref in direction.flows:
            found = self.flows[ref.switch]
            if isinstance(found, SwitchError):
                raise found
            counts = found.get(_signature(plan.cookie, ref))
            if counts is None:
                raise SwitchError(ref.switch, f"holds no flow {ref.match} of {plan.reservation_id}")
            flows[ref] = counts
        meters: dict[tuple[str, int], PacketsBytes] = {}
        if direction.meter is not None:
            switch, meter_id = direction.meter
            bands = self.meters[switch]
            if isinstance(bands, SwitchError):
                raise bands
            if meter_id not in bands:
                raise SwitchError(switch, f"holds no meter {meter_id} of {plan.reservation_id}")
            meters[direction.meter] = bands[meter_id]
        return tally_of(direction, flows, meters)


def _signature(cookie: int, ref: FlowRef) -> Signature:
    m: Match = ref.match
    protocol = None if m.eth_type is None else _PROTOCOLS.get(m.eth_type, f"{m.eth_type:#06x}")
    return (
        cookie,
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
            int(fields.get("cookie", "0"), 0),
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
