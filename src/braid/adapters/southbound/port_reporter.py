"""`braid controller`'s port-status events, told to `braid serve` as link states.

A switch sends OFPT_PORT_STATUS when one of its ports goes down or comes
back (carrier lost, `ip link set … down`, the port deleted), and Open
vSwitch also when the port's liveness changes (BFD on the port lost or
regained its session: a silent failure further along the path). The reporter
maps the port to the link it belongs to (the wiring file), and when the
link's state changes it posts it with a monitor token — the very client a
monitor's `service` action uses — so the service moves the reservations on
the link (protected ones onto their standby) and programs the switches.

Events arrive on os-ken's event thread and must not wait for HTTP: they are
queued, and one worker posts them in order. A post that fails (the service
is down, the network is) is tried again every `retry_s` until it is taken or
a newer state of the same link replaces it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping
from typing import Final

from braid.adapters.failover.service_action import LinkStateClient, Posted
from braid.core.failover.ports import LinkChange, PortEvent, PortLinks, port_changed
from braid.core.rules.model import PortMap

__all__ = ["PortReporter", "port_links"]

RETRY_S: Final = 1.0
_STOP: Final = object()

log = logging.getLogger(__name__)


def port_links(ports: PortMap) -> PortLinks:
    """Which link each switch port belongs to, from the wiring's port map."""
    return PortLinks.of({name: (s.dpid, s.link_ports) for name, s in ports.switches.items()})


class PortReporter:
    """Folds port events into link states and posts each change to braid serve."""

    def __init__(self, links: PortLinks, client: LinkStateClient, retry_s: float = RETRY_S) -> None:
        self._links = links
        self._client = client
        self._retry_s = retry_s
        self._pending: dict[str, LinkChange] = {}  # link -> its newest state not yet taken
        self._events: queue.Queue[object] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.posted: list[Posted] = []  # every answer, in order

    # --- from os-ken's event thread ---

    def port_status(self, dpid: int, port: int, up: bool, live: bool | None = None) -> None:
        """Queue one event; returns at once."""
        self._events.put(PortEvent(dpid, port, up, live))

    # --- the worker ---

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="port-reporter", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self._events.put(_STOP)
            self._thread.join(timeout=10)
            self._thread = None
        self._client.close()

    def handle(self, event: PortEvent) -> None:
        """Fold one event in, and post what is pending (the worker's step; tests call it)."""
        self._links, change = port_changed(self._links, event)
        if change is not None:
            self._pending[change.link] = change
        self.flush()

    def flush(self) -> None:
        """Post every pending link state, oldest first; keep those the service did not take."""
        for link, change in list(self._pending.items()):
            posted = self._client.post(link, change.state)
            self.posted.append(posted)
            if posted.ok:
                del self._pending[link]
                log.info("link %s %s (%s port %d): %d reservations moved",
                         link, change.state, change.switch, change.port, posted.moved)  # fmt: skip
            else:
                log.warning("link %s %s not taken, trying again: %s",
                            link, change.state, posted.error)  # fmt: skip

    @property
    def pending(self) -> Mapping[str, LinkChange]:
        return dict(self._pending)

    def _work(self) -> None:
        while True:
            try:
                item = self._events.get(timeout=self._retry_s if self._pending else None)
            except queue.Empty:
                self.flush()
                continue
            if item is _STOP:
                return
            if isinstance(item, PortEvent):
                self.handle(item)
