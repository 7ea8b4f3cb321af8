"""The switches the provisioner acts on, each through the driver configured for it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from braid.adapters.southbound.driver import SouthboundDriver, naming_the_switch
from braid.app.provisioning.ports import SwitchError
from braid.core.rules.model import RuleSet

__all__ = ["DriverTables"]


class DriverTables:
    """`SwitchTables` over southbound drivers: `drivers` maps each switch to its driver."""

    def __init__(self, drivers: Mapping[str, SouthboundDriver], dpids: Mapping[str, int]) -> None:
        self.drivers = dict(drivers)
        self.dpids = dict(dpids)

    def switches(self) -> tuple[str, ...]:
        return tuple(sorted(self.drivers))

    def dpid(self, switch: str) -> int:
        return self.dpids[switch]

    def read(self, switch: str) -> RuleSet:
        driver = self.drivers[switch]
        with naming_the_switch(switch):
            dump_one = getattr(driver, "dump_switch", None)
            if dump_one is not None:
                found: RuleSet = dump_one(switch)
                return found
            tables = driver.dump()
        # A controller names a switch by its datapath id until braid has sent it rules.
        dpid = self.dpids[switch]
        table = tables.get(switch) or next((t for t in tables.values() if t.dpid == dpid), None)
        if table is None:
            raise SwitchError(switch, "not connected to its controller")
        return dataclasses.replace(table, switch=switch)

    def apply(self, rule_set: RuleSet) -> None:
        with naming_the_switch(rule_set.switch):
            self.drivers[rule_set.switch].apply(rule_set)

    def remove(self, rule_set: RuleSet) -> None:
        with naming_the_switch(rule_set.switch):
            self.drivers[rule_set.switch].remove(rule_set)
