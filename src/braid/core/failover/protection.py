"""Link state and where a reservation's traffic goes: primary, standby, re-planned, degraded.

Pure decisions for the service's fail-over: given the links that are down,
which of a protected reservation's two booked paths carries its traffic;
whether an unprotected one must be re-planned; and the topology data with a
link's state changed (a link's state lives in the topology, so every replica
plans around a down link and the store refuses writes planned before it went
down).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from braid.core.errors import InputError
from braid.core.model.paths import Path
from braid.core.model.topology import LINK_STATES, Topology

__all__ = [
    "ProtectedPaths",
    "down_links",
    "path_up",
    "with_link_state",
]


@dataclass(frozen=True, slots=True)
class ProtectedPaths:
    """A protected reservation's two booked paths, and which one carries its traffic."""

    primary: Path
    standby: Path
    on_standby: bool = False

    @property
    def active(self) -> Path:
        return self.standby if self.on_standby else self.primary

    @property
    def inactive(self) -> Path:
        return self.primary if self.on_standby else self.standby

    def choose(self, down: Collection[str], *, revert: bool) -> ProtectedPaths:
        """Where the traffic should be with `down` links down.

        Off a path with a down link onto the other if that one is up; back
        to the primary once it is up again when `revert` says so. With both
        paths broken it stays where it is (degraded, see `degraded`).
        """
        primary_up, standby_up = path_up(self.primary, down), path_up(self.standby, down)
        if self.on_standby:
            back = primary_up and (revert or not standby_up)
            return ProtectedPaths(self.primary, self.standby, not back)
        return ProtectedPaths(self.primary, self.standby, not primary_up and standby_up)

    def degraded(self, down: Collection[str]) -> tuple[str, ...]:
        """The down links on the path carrying the traffic (empty: it is whole)."""
        return tuple(link for link in self.active.links if link in down)


def path_up(path: Path, down: Collection[str]) -> bool:
    return not any(link in down for link in path.links)


def down_links(topology: Topology) -> frozenset[str]:
    return frozenset(link.id for link in topology.links.values() if not link.up)


def with_link_state(data: Mapping[str, Any], link: str, state: object) -> dict[str, Any]:
    """Topology data (braid's own format) with `link` set to `state` ("up" or "down").

    Raises InputError naming `state` or `link` for a bad one; `data` is not changed.
    """
    if state not in LINK_STATES:
        raise InputError("state", f"must be one of {', '.join(LINK_STATES)}, not {state!r}")
    links = [dict(entry) for entry in data.get("links", ())]
    found = [entry for entry in links if entry.get("id") == link]
    if not found:
        raise InputError("link", f"unknown link {link!r}")
    for entry in found:
        if state == "up":
            entry.pop("state", None)
        else:
            entry["state"] = state
    return {**data, "links": links}
