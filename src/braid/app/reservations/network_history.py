"""What operators read about the network itself: its topology versions and maintenance.

Any signed-in caller may read both (the topology is readable by everyone, and
maintenance windows show on every link's utilisation); the web interface's
operator pages are their main readers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from braid.app.records import TopologyVersion, User
from braid.app.reservations.books import Books
from braid.app.reservations.links import MaintenanceWindow, may_be_maintenance
from braid.core.model.topology import Topology, topology_from_dict

__all__ = ["MaintenanceEntry", "TopologyChange", "maintenance_windows", "topology_versions"]

# A version lists at most this many link ids per kind of change; the counts are exact.
MAX_IDS: Final = 50


@dataclass(frozen=True, slots=True)
class TopologyChange:
    """One stored topology version and how it differs from the one before."""

    version: int
    created_at: int
    actor: str
    nodes: int
    links: int
    capacity: int  # bit/s, summed over the links (one direction)
    added: tuple[str, ...]  # link ids new in this version
    removed: tuple[str, ...]
    resized: tuple[str, ...]  # link ids whose capacity changed
    counts: tuple[int, int, int]  # exact numbers of added, removed, resized links


@dataclass(frozen=True, slots=True)
class MaintenanceEntry:
    """A maintenance window that has not ended, with the links it takes out."""

    window: MaintenanceWindow
    owner: str
    target: str
    links: tuple[str, ...]


def topology_versions(books: Books, user: User) -> tuple[TopologyChange, ...]:
    """Every stored topology version, newest first, each compared with its predecessor."""
    del user  # any signed-in caller
    out: list[TopologyChange] = []
    before: Mapping[str, int] = {}
    for stored in books.store.topology_versions():
        change, before = _change(stored, before)
        out.append(change)
    return tuple(reversed(out))


def _change(
    stored: TopologyVersion, before: Mapping[str, int]
) -> tuple[TopologyChange, dict[str, int]]:
    topology: Topology = topology_from_dict(stored.data)
    now = {link.id: link.capacity for link in topology.links.values()}
    added = sorted(set(now) - set(before)) if before else []
    removed = sorted(set(before) - set(now))
    resized = sorted(i for i in now.keys() & before.keys() if now[i] != before[i])
    change = TopologyChange(
        stored.version,
        stored.created_at,
        stored.actor,
        len(topology.nodes),
        len(now),
        sum(now.values()),
        tuple(added[:MAX_IDS]),
        tuple(removed[:MAX_IDS]),
        tuple(resized[:MAX_IDS]),
        (len(added), len(removed), len(resized)),
    )
    return change, now


def maintenance_windows(books: Books, user: User) -> tuple[MaintenanceEntry, ...]:
    """Maintenance windows that have not ended, by start: from the replica's own timelines."""
    del user
    now = books.clock()
    mirror = books.mirror
    mirror.catch_up(now)
    with mirror.lock:
        links = {
            booking.id: tuple(dict.fromkeys(k for a in booking.allocations for k in a.path.links))
            for booking in mirror.network.bookings.values()
            if may_be_maintenance(booking.id) and booking.end > now
        }
    out = []
    for rid, taken in links.items():
        record = books.store.get(rid)
        if record is None or record.kind != "maintenance":
            continue
        request: Mapping[str, Any] = record.request
        window = MaintenanceWindow(
            record.id, record.start, record.end, str(request.get("reason", ""))
        )
        out.append(MaintenanceEntry(window, record.owner, str(request.get("target", "")), taken))
    return tuple(sorted(out, key=lambda e: (e.window.start, e.window.id)))
