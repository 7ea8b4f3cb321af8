"""`SwitchCounters`: a plan's flow and meter counters, read through `SwitchStats`.

`read_all` reads every switch once for all the plans of a sampling pass:
braid's flows with their counters (its cookie tag) and, where a plan's
meter sits, the meters' band counts; so a pass costs two requests per
switch however many reservations there are (`read`, for one plan, asks
for the plan's cookie only). A flow is found by its key (cookie, table,
priority, match): within one cookie the match tells a reservation's flows
apart (the IPv4 and ARP entry rules differ in protocol, the label rules in
port and VLAN).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from braid.adapters.southbound.switch_stats import FlowKey, SwitchStats
from braid.app.provisioning.ports import Counts, SwitchError
from braid.core.delivery import CountedDirection, FlowRef, Tally, counted_flows, tally_of
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import BRAID_COOKIE_MASK, BRAID_COOKIE_TAG, HostPort, RulePlan

__all__ = ["SwitchCounters"]

Plans = Sequence[tuple[RulePlan, HostPort, HostPort]]
EXACT: Final = (1 << 64) - 1


class SwitchCounters:
    """`DeliveryCounters` over `stats`."""

    def __init__(self, stats: SwitchStats) -> None:
        self.stats = stats

    def read(self, plan: RulePlan, src: HostPort, dst: HostPort) -> Counts:
        answer = self._read([(plan, src, dst)], plan.cookie, EXACT)[0]
        if isinstance(answer, SwitchError):
            raise answer
        return answer

    def read_all(self, plans: Plans) -> list[Counts | SwitchError]:
        """Each plan's counts, or the error of the switch that failed it, in order."""
        return self._read(plans, BRAID_COOKIE_TAG, BRAID_COOKIE_MASK)

    def _read(self, plans: Plans, cookie: int, mask: int) -> list[Counts | SwitchError]:
        ways = [counted_flows(plan, src, dst) for plan, src, dst in plans]
        counting = {ref.switch for pair in ways for way in pair for ref in way.flows}
        metered = {way.meter[0] for pair in ways for way in pair if way.meter is not None}
        read = _Read(
            {s: self._flows(s, cookie, mask) for s in sorted(counting)},
            {s: self._meters(s) for s in sorted(metered)},
        )
        answers: list[Counts | SwitchError] = []
        for (plan, _, _), (forward, reverse) in zip(plans, ways, strict=True):
            try:
                answers.append(Counts(read.tally(plan, forward), read.tally(plan, reverse)))
            except SwitchError as exc:
                answers.append(exc)
        return answers

    def _flows(
        self, switch: str, cookie: int, mask: int
    ) -> dict[FlowKey, PacketsBytes] | SwitchError:
        try:
            flows = self.stats.flow_counts(switch, cookie, mask)
        except SwitchError as exc:
            return exc
        return {f.key: (f.packets, f.bytes) for f in flows}

    def _meters(self, switch: str) -> dict[int, PacketsBytes] | SwitchError:
        try:
            return self.stats.meter_counts(switch)
        except SwitchError as exc:
            return exc


@dataclass(frozen=True, slots=True)
class _Read:
    """What one pass read from each switch (or the switch's error)."""

    flows: Mapping[str, dict[FlowKey, PacketsBytes] | SwitchError]
    meters: Mapping[str, dict[int, PacketsBytes] | SwitchError]

    def tally(self, plan: RulePlan, direction: CountedDirection) -> Tally:
        flows: dict[FlowRef, PacketsBytes] = {}
        for ref in direction.flows:
            found = self.flows[ref.switch]
            if isinstance(found, SwitchError):
                raise found
            counts = found.get((plan.cookie, ref.table_id, ref.priority, ref.match))
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
