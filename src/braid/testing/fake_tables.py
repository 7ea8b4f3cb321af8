"""A fake network as the provisioner sees switches: read braid's entries back, add, delete.

Failures can be injected per switch (`refuse`), and `crash_after` stops the
caller dead after that many changes, as a kill -9 would.
"""

from __future__ import annotations

from braid.app.provisioning.ports import SwitchError
from braid.core.rules.enforcement import BRAID_METER_IDS
from braid.core.rules.model import BRAID_COOKIE_MASK, BRAID_COOKIE_TAG, BRAID_GROUP_IDS, RuleSet
from braid.testing.fake_network import FakeNetwork

__all__ = ["Crash", "FakeSwitchTables"]


class Crash(BaseException):
    """The process died in the middle of a pass (not an error anyone catches)."""


class FakeSwitchTables:
    def __init__(self, network: FakeNetwork) -> None:
        self.network = network
        self.refuse: dict[str, str] = {}  # switch -> the error it answers with
        self.crash_after: int | None = None
        self.changes = 0
        self.reads = 0
        self.tries: dict[str, int] = {}  # switch -> reads asked of it, answered or not

    def switches(self) -> tuple[str, ...]:
        return tuple(sorted(self.network.switches))

    def dpid(self, switch: str) -> int:
        return self.network.switches[switch].dpid

    def read(self, switch: str) -> RuleSet:
        self.tries[switch] = self.tries.get(switch, 0) + 1
        self._check(switch)
        self.reads += 1
        table = self.network.switches[switch].dump()
        return RuleSet(
            switch,
            table.dpid,
            tuple(f for f in table.flows if f.cookie & BRAID_COOKIE_MASK == BRAID_COOKIE_TAG),
            tuple(g for g in table.groups if g.group_id in BRAID_GROUP_IDS),
            tuple(m for m in table.meters if m.meter_id in BRAID_METER_IDS),
            table.queues,
        )

    def apply(self, rule_set: RuleSet) -> None:
        self._change(rule_set.switch)
        self.network.apply(rule_set)

    def remove(self, rule_set: RuleSet) -> None:
        self._change(rule_set.switch)
        self.network.remove(rule_set)

    def _change(self, switch: str) -> None:
        self._check(switch)
        if self.crash_after is not None and self.changes >= self.crash_after:
            raise Crash(f"killed after {self.changes} changes")
        self.changes += 1

    def _check(self, switch: str) -> None:
        if switch in self.refuse:
            raise SwitchError(switch, self.refuse[switch])
