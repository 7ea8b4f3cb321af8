"""The circuit check on real switches, over `SwitchStats` (ovs-ofctl, a controller, or both).

For each probe of `braid.core.provisioning.circuit_check` one packet-out
sends its frames from the ingress switch, already tagged with the path's
VLAN, out of the path's first port (`probe_actions`: push the VLAN, output).
The label rules' counters are read (braid's cookies only) before and
after, once per switch for all the reservations checked together.

Counters lag: a frame crossing a real link reaches the next switch
asynchronously, and Open vSwitch's userspace datapath credits a rule's
packet count for frames of an installed datapath flow only when its
revalidators next run (about every half second). So the check reads the
counters again until every probe is accounted for or `settle` seconds
have passed; only a failing check waits that long.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from braid.adapters.southbound.switch_stats import SwitchStats, label_counters
from braid.core.provisioning.circuit_check import (
    PROBE_COUNT,
    CheckResult,
    CounterKey,
    Probe,
    circuit_probes,
    judge,
)
from braid.core.rules.model import (
    BRAID_COOKIE_MASK,
    BRAID_COOKIE_TAG,
    Action,
    Output,
    PortMap,
    PushVlan,
    RulePlan,
)

__all__ = ["CircuitProbe", "probe_actions"]


class CircuitProbe:
    """`CircuitChecker` injecting and counting through `stats`."""

    def __init__(
        self,
        stats: SwitchStats,
        ports: PortMap,
        *,
        count: int = PROBE_COUNT,
        settle: float = 3.0,
        poll: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.stats, self.ports = stats, ports
        self.count, self.settle, self.poll = count, settle, poll
        self.clock, self.sleep = clock, sleep

    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]:
        """Every plan's probes sent at once, judged on one set of counter reads."""
        probes = [circuit_probes(plan, self.ports, self.count) for plan in plans]
        switches = sorted({s for each in probes for s in each.switches()})
        before = self.counters(switches)
        for probe in (p for each in probes for p in each.probes):
            self.stats.packet_out(probe.switch, probe_actions(probe), [probe.frame] * self.count)
        deadline = self.clock() + self.settle
        while True:
            after = self.counters(switches)
            results = [judge(each, before, after) for each in probes]
            if all(r.verified for r in results) or self.clock() >= deadline:
                return results
            self.sleep(self.poll)

    def counters(self, switches: Iterable[str]) -> dict[CounterKey, int]:
        """Packet counts of braid's label rules on these switches."""
        found: dict[CounterKey, int] = {}
        for switch in switches:
            flows = self.stats.flow_counts(switch, BRAID_COOKIE_TAG, BRAID_COOKIE_MASK)
            found.update(label_counters(switch, flows))
        return found


def probe_actions(probe: Probe) -> tuple[Action, ...]:
    """What the ingress switch does with a probe's frames: tag them, send them onto the path."""
    return (PushVlan(probe.vlan), Output(probe.out_port))
