"""A fake network's flow counters as `DeliveryCounters`: what its switches counted.

The fake switches count every packet a flow matches (`FakeSwitch.flow_counts`)
but, having no clock, their meters drop nothing; a test that wants policing
drops sets them in `dropped` (by switch and meter id). `refuse` makes a
switch fail to answer, as an unreachable one would.
"""

from __future__ import annotations

from collections.abc import Sequence

from braid.app.provisioning.ports import Counts, SwitchError
from braid.core.delivery import CountedDirection, FlowRef, Tally, counted_flows, tally_of
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import HostPort, RulePlan
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import FakeSwitch

__all__ = ["FakeDeliveryCounters"]


class FakeDeliveryCounters:
    def __init__(self, network: FakeNetwork) -> None:
        self.network = network
        self.dropped: dict[tuple[str, int], PacketsBytes] = {}
        self.refuse: dict[str, str] = {}
        self.reads = 0

    def read(self, plan: RulePlan, src: HostPort, dst: HostPort) -> Counts:
        self.reads += 1
        forward, reverse = counted_flows(plan, src, dst)
        return Counts(self._tally(forward), self._tally(reverse))

    def read_all(
        self, plans: Sequence[tuple[RulePlan, HostPort, HostPort]]
    ) -> list[Counts | SwitchError]:
        answers: list[Counts | SwitchError] = []
        for plan, src, dst in plans:
            try:
                answers.append(self.read(plan, src, dst))
            except SwitchError as exc:
                answers.append(exc)
        return answers

    def _tally(self, direction: CountedDirection) -> Tally:
        flows: dict[FlowRef, PacketsBytes] = {}
        for ref in direction.flows:
            switch = self._switch(ref.switch)
            key = (ref.table_id, ref.priority, ref.match)
            if key not in switch.flows:
                raise SwitchError(ref.switch, f"holds no flow {ref.match}")
            flows[ref] = switch.flow_counts.get(key, (0, 0))
        meters: dict[tuple[str, int], PacketsBytes] = {}
        if direction.meter is not None:
            name, meter_id = direction.meter
            if meter_id not in self._switch(name).meters:
                raise SwitchError(name, f"holds no meter {meter_id}")
            meters[direction.meter] = self.dropped.get(direction.meter, (0, 0))
        return tally_of(direction, flows, meters)

    def _switch(self, name: str) -> FakeSwitch:
        if name in self.refuse:
            raise SwitchError(name, self.refuse[name])
        return self.network.switches[name]
