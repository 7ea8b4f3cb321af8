"""From switch ports to link states: what a controller's port-status events say about links.

A link is down while any end of it that the controller sees is down, and up
again once none is. An end is down when its port is (link down, port down,
deleted) or, on a switch that reports liveness, not live: with BFD on the
port, that is a failure further along the path that leaves every port up.
Pure: the caller feeds port events one at a time and posts the changes
returned (`LinkChange`); ports that no link uses (hosts, unwired ports)
change nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from braid.core.errors import InputError

__all__ = ["LinkChange", "LinkEnd", "PortEvent", "PortLinks", "port_changed"]


@dataclass(frozen=True, slots=True)
class LinkEnd:
    """One end of a link: the switch (topology node) and the link's id."""

    switch: str
    link: str


@dataclass(frozen=True, slots=True)
class PortEvent:
    """A switch (by datapath id) said one of its ports is up or down.

    `up`: neither the link nor the port is down, and the port exists.
    `live`: OpenFlow 1.3's OFPPS_LIVE, the liveness fast-failover groups
    watch (None: not reported). Open vSwitch clears it when BFD on the port
    says the path does not forward, though the port stays up.
    """

    dpid: int
    port: int
    up: bool
    live: bool | None = None


@dataclass(frozen=True, slots=True)
class LinkChange:
    """A link's new state and the port event that caused it."""

    link: str
    state: Literal["up", "down"]
    switch: str
    port: int


@dataclass(frozen=True, slots=True)
class PortLinks:
    """Which link each (dpid, port) belongs to, and the ends seen down so far."""

    ends: Mapping[tuple[int, int], LinkEnd] = field(hash=False)
    down: frozenset[LinkEnd] = frozenset()
    # (dpid, port)s that reported themselves live once: from then on, not live is down
    # (a switch that never sets the bit must not look down for it)
    live_seen: frozenset[tuple[int, int]] = frozenset()

    @staticmethod
    def of(switches: Mapping[str, tuple[int, Mapping[str, int]]]) -> PortLinks:
        """From each switch's datapath id and link ports (the wiring); errors name the field."""
        ends: dict[tuple[int, int], LinkEnd] = {}
        for switch, (dpid, link_ports) in sorted(switches.items()):
            for link, port in sorted(link_ports.items()):
                taken = ends.get((dpid, port))
                if taken is not None:
                    raise InputError(
                        f"switches.{switch}.ports.{link}",
                        f"port {port} of dpid {dpid} is link {taken.link!r}'s already",
                    )
                ends[(dpid, port)] = LinkEnd(switch, link)
        return PortLinks(ends)

    def is_down(self, link: str) -> bool:
        return any(end.link == link for end in self.down)


def port_changed(links: PortLinks, event: PortEvent) -> tuple[PortLinks, LinkChange | None]:
    """The new view, and the link change this event makes (None: no link changed state)."""
    key = (event.dpid, event.port)
    end = links.ends.get(key)
    if end is None:
        return links, None
    seen = links.live_seen | {key} if event.live else links.live_seen
    up = event.up and not (event.live is False and key in seen)
    was_down = links.is_down(end.link)
    down = links.down - {end} if up else links.down | {end}
    after = replace(links, down=down, live_seen=seen)
    now_down = after.is_down(end.link)
    if now_down == was_down:
        return after, None
    return after, LinkChange(end.link, "down" if now_down else "up", end.switch, event.port)
