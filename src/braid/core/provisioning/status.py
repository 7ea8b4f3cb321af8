"""A reservation's provisioning state, as operators see it, and how one pass moves it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = ["BACKOFF_CAP", "Phase", "Status", "backoff", "settled"]

BACKOFF_BASE: Final = 1
BACKOFF_CAP: Final = 60


class Phase(StrEnum):
    SCHEDULED = "scheduled"  # booked; its rules go in `lead` seconds before it starts
    INSTALLING = "installing"  # its rules are being written
    INSTALLED = "installed"  # every switch on its paths holds its rules
    REMOVING = "removing"  # its rules are being taken out
    REMOVED = "removed"  # no switch holds any of its rules
    FAILED = "failed"  # a switch refused or could not be reached; retried with back-off


@dataclass(frozen=True, slots=True)
class Status:
    phase: Phase
    switch: str | None = None  # the switch that failed, for FAILED
    error: str | None = None
    since: int = 0
    # The circuit check run after the install, or the last change of its rules
    # (`core.provisioning.circuit_check`):
    # True/False when it ran, None when the switches offer none; `check` says what it saw.
    verified: bool | None = None
    check: str | None = None

    def same(self, other: Status | None) -> bool:
        """Equal but for `since` and the check: a pass that changes nothing writes nothing
        (the check is made once, when the rules go in, and kept until the phase moves)."""
        return other is not None and (self.phase, self.switch, self.error) == (
            other.phase,
            other.switch,
            other.error,
        )


def settled(
    wanted: bool,
    switches: Iterable[str],
    errors: Mapping[str, str],
    before: Status | None,
    now: int,
) -> Status:
    """The state after a pass: `errors` are the switches that failed in it, with why.

    A reservation never installed and not wanted yet stays scheduled; one
    that was installed (or tried) and is no longer wanted is removed once
    none of its switches failed.
    """
    failed = sorted(s for s in switches if s in errors)
    if failed:
        return Status(Phase.FAILED, failed[0], errors[failed[0]], now)
    if wanted:
        return Status(Phase.INSTALLED, since=now)
    if before is None or before.phase in (Phase.SCHEDULED, Phase.REMOVED):
        return before if before is not None else Status(Phase.SCHEDULED, since=now)
    return Status(Phase.REMOVED, since=now)


def backoff(failures: int) -> int:
    """Seconds to wait before trying a switch again after `failures` failures in a row."""
    if failures <= 0:
        return 0
    return int(min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (failures - 1)))
