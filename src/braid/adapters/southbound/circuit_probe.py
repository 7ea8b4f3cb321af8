"""The circuit check on Open vSwitch bridges, through `ovs-ofctl` (the direct driver's runner).

For each probe of `braid.core.provisioning.circuit_check` one `packet-out`
sends its frames from the ingress bridge, already tagged with the path's
VLAN, out of the path's first port:

    ovs-ofctl -O OpenFlow13 packet-out BR controller \
        push_vlan:0x8100,set_field:<4096+vid>->vlan_vid,output:<port> <hex frame>...

(the form taking several packets at once; Open vSwitch 3.1 reads no
packet-outs from stdin). The label rules' counters are read with
`dump-flows` (braid's cookies only) before and after, once per switch for
all the reservations checked together.

Counters lag: a frame crossing a real link reaches the next bridge
asynchronously, and the userspace datapath credits a rule's `n_packets`
for frames of an installed datapath flow only when its revalidators next
run (about every half second). So the check reads the counters again until
every probe is accounted for or `settle` seconds have passed; only a
failing check waits that long.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from braid.adapters.southbound.direct import CommandRunner, ofctl_runner
from braid.adapters.southbound.driver import SouthboundError
from braid.app.provisioning.ports import SwitchError
from braid.core.provisioning.circuit_check import (
    PROBE_COUNT,
    CheckResult,
    CounterKey,
    Probe,
    circuit_probes,
    judge,
)
from braid.core.rules.model import BRAID_COOKIE_MASK, BRAID_COOKIE_TAG, PortMap, RulePlan

__all__ = ["OfctlCircuitProbe", "packet_out_args", "read_counters"]

VLAN_PRESENT: Final = 0x1000
_FIELD: Final = re.compile(r"\b(n_packets|in_port|dl_vlan)=(\d+)")


class OfctlCircuitProbe:
    """`CircuitChecker` for bridges driven by `ovs-ofctl` (switch name -> bridge)."""

    def __init__(
        self,
        bridges: Mapping[str, str],
        ports: PortMap,
        runner: CommandRunner | None = None,
        *,
        count: int = PROBE_COUNT,
        settle: float = 3.0,
        poll: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.bridges, self.ports = dict(bridges), ports
        self.run = runner or ofctl_runner()
        self.count, self.settle, self.poll = count, settle, poll
        self.clock, self.sleep = clock, sleep

    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]:
        """Every plan's probes sent at once, judged on one set of counter reads."""
        probes = [circuit_probes(plan, self.ports, self.count) for plan in plans]
        switches = sorted({s for each in probes for s in each.switches()})
        before = self.counters(switches)
        for probe in (p for each in probes for p in each.probes):
            self._call(probe.switch, packet_out_args(self._bridge(probe.switch), probe, self.count))
        deadline = self.clock() + self.settle
        while True:
            after = self.counters(switches)
            results = [judge(each, before, after) for each in probes]
            if all(r.verified for r in results) or self.clock() >= deadline:
                return results
            self.sleep(self.poll)

    def counters(self, switches: Iterable[str]) -> dict[CounterKey, int]:
        """n_packets of braid's label rules on these switches (their keys are unique: two
        reservations' rules never share a VLAN on a port)."""
        found: dict[CounterKey, int] = {}
        braid = f"cookie={BRAID_COOKIE_TAG:#x}/{BRAID_COOKIE_MASK:#x}"
        for switch in switches:
            args = ["--no-names", "dump-flows", self._bridge(switch), braid]
            found.update(read_counters(switch, self._call(switch, args)))
        return found

    def _bridge(self, switch: str) -> str:
        bridge = self.bridges.get(switch)
        if bridge is None:
            raise SwitchError(switch, "not managed by this driver (no bridge configured)")
        return bridge

    def _call(self, switch: str, args: list[str]) -> str:
        try:
            return self.run(args)
        except SouthboundError as exc:
            raise SwitchError(switch, exc.message) from exc


def packet_out_args(bridge: str, probe: Probe, count: int) -> list[str]:
    """`ovs-ofctl` arguments sending `count` copies of the probe's frame onto its path."""
    actions = (
        f"push_vlan:0x8100,set_field:{VLAN_PRESENT + probe.vlan}->vlan_vid,output:{probe.out_port}"
    )
    return ["packet-out", bridge, "controller", actions, *[probe.frame.hex()] * count]


def read_counters(switch: str, dump: str) -> dict[CounterKey, int]:
    """(switch, in_port, VLAN) -> n_packets of every rule in a `dump-flows` matching both."""
    found: dict[CounterKey, int] = {}
    for line in dump.splitlines():
        fields = dict(_FIELD.findall(line.partition(" actions=")[0]))
        if {"n_packets", "in_port", "dl_vlan"} <= fields.keys():
            key = (switch, int(fields["in_port"]), int(fields["dl_vlan"]))
            found[key] = found.get(key, 0) + int(fields["n_packets"])
    return found
