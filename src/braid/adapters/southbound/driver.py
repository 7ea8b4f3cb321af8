"""The southbound driver interface: how braid puts rule sets into switches.

Two implementations share it: `direct` (ovs-ofctl on the local machine, the
"dpctl method") and `controller` (a client of the `braid controller` os-ken
process, the "ODL method"). A driver remembers what it was asked to install
(the desired state), so that `reconcile` can make a switch that restarted or
reconnected hold exactly that again.

Contract for every driver:
- `apply(rule_set)` adds the rule set's port queues, meters, groups, then
  its flows, to switch `rule_set.switch`. A flow whose key (table, priority,
  match) is already there is replaced, a group, meter or queue with the same
  id is modified: applying twice is the same as applying once. Buckets/flows
  referring to groups or meters of the same rule set are safe because those
  go first.
- `remove(rule_set)` deletes exactly those flows (by key, strictly), then
  those groups, meters and queues; entries not present are ignored. Other
  flows stay.
- `dump()` reads every managed switch back as model objects, one `RuleSet`
  per switch, keyed by switch name; only braid's flows (cookie tagged with
  `BRAID_COOKIE_TAG`), groups (ids in `BRAID_GROUP_IDS`), meters (ids in
  `BRAID_METER_IDS`) and queues (a driver's own, e.g. braid's tc qdisc) are
  reported.
- `reconcile()` makes each reachable switch's braid-owned entries equal to
  the desired state (adds what is missing, deletes leftovers, rewrites what
  differs) and returns what it changed per switch.
Errors reaching a switch raise `SouthboundError`, naming the switch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from braid.app.provisioning.ports import SwitchError
from braid.core.errors import BraidError
from braid.core.rules.model import RuleSet

__all__ = [
    "NotConnectedError",
    "ReconcileReport",
    "SouthboundDriver",
    "SouthboundError",
    "naming_the_switch",
]


class SouthboundError(BraidError):
    """A switch could not be read or programmed."""

    def __init__(self, switch: str, message: str) -> None:
        super().__init__(f"switch {switch}: {message}" if switch else message)
        self.switch = switch
        self.message = message


class NotConnectedError(SouthboundError):
    """The switch is not connected to its controller: there is nothing to read or send to."""


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    """What reconciling one switch changed: entries added and entries deleted."""

    switch: str
    added: RuleSet
    deleted: RuleSet

    @property
    def changed(self) -> bool:
        return not (self.added.empty and self.deleted.empty)


@runtime_checkable
class SouthboundDriver(Protocol):
    """Programs switches with braid's abstract rule sets (see module docstring)."""

    def apply(self, rule_set: RuleSet) -> None:
        """Install `rule_set` on its switch and add it to the desired state."""
        ...

    def remove(self, rule_set: RuleSet) -> None:
        """Delete exactly `rule_set` from its switch and from the desired state."""
        ...

    def dump(self) -> Mapping[str, RuleSet]:
        """The braid-owned contents of every managed switch, read back from the switches."""
        ...

    def reconcile(self) -> Mapping[str, ReconcileReport]:
        """Make every reachable switch hold exactly the desired state; say what changed."""
        ...


@contextmanager
def naming_the_switch(switch: str) -> Iterator[None]:
    """A driver's `SouthboundError` inside, raised again as the provisioner's `SwitchError`
    of `switch`."""
    try:
        yield
    except SouthboundError as exc:
        raise SwitchError(switch, exc.message) from exc
