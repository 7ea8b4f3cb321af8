"""What the provisioner needs from the outside world."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

from braid.core.errors import BraidError
from braid.core.provisioning.status import Status
from braid.core.rules.model import RuleSet

__all__ = ["ProvisioningStore", "SwitchError", "SwitchTables"]


class SwitchError(BraidError):
    """A switch could not be read or programmed; `switch` names it."""

    def __init__(self, switch: str, message: str) -> None:
        super().__init__(f"switch {switch}: {message}")
        self.switch = switch
        self.message = message


class SwitchTables(Protocol):
    """braid's flows and groups on each switch: read them back, add, delete.

    Only braid's own entries (its cookie tag, its group ids) are ever read
    or touched; every call raises `SwitchError` naming the switch on failure.
    """

    def switches(self) -> tuple[str, ...]: ...

    def dpid(self, switch: str) -> int: ...

    def read(self, switch: str) -> RuleSet: ...

    def apply(self, rule_set: RuleSet) -> None: ...

    def remove(self, rule_set: RuleSet) -> None: ...


class ProvisioningStore(Protocol):
    """Each reservation's provisioning state, and the lease that lets one replica act."""

    def statuses(self, ids: Collection[str] | None = None) -> dict[str, Status]:
        """Every reservation's state, or only those of `ids` (missing: never provisioned)."""
        ...

    def put_statuses(self, changed: Mapping[str, Status], *, now: int, actor: str) -> None:
        """Write these states (and an audit entry for each), all or none."""
        ...

    def acquire(self, name: str, holder: str, *, now: int, ttl: int) -> bool:
        """Take or renew lease `name` for `holder` until now + ttl; False if another holds it."""
        ...
