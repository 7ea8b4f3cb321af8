"""Labels over time: which VLAN each link carries, and which group ids are taken, when.

A reservation's labels are chosen once, at booking, and kept for its life:
switches hold them while it is installed, and recompiling its rules at any
later time must give the same rules. Two reservations whose windows overlap
never share a VLAN on a link (a core rule matches on in-port and VLAN), nor a
group id (groups are per switch; one id space across the network is simpler
and has room for 65,536). Windows are half-open [start, end).

VLANs are the lowest free ones, as operators expect to read them. Group ids
are nobody's concern but the switches', so the search starts at a point
drawn from the owner's id: it usually succeeds at once instead of walking
past every group id in use.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.model.vlans import ALL_VLANS, VlanSpans, allowed_vlans
from braid.core.rules.model import BRAID_GROUP_IDS

__all__ = ["Assigned", "LabelCalendar", "NoFreeLabelError", "Window"]

Window = tuple[int, int]


class NoFreeLabelError(InputError):
    """No VLAN (or group id) is free for the window; `field` names the link."""


@dataclass(frozen=True, slots=True)
class Assigned:
    """One reservation's labels: a VLAN per path (in path order), and its group ids."""

    vlans: tuple[int, ...]
    group_ids: tuple[int, ...]

    def take(self, vlans: int, groups: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The labels, in the compiler's way of asking for them (see `LabelPool.take`)."""
        if vlans != len(self.vlans) or groups != len(self.group_ids):
            raise InputError(
                "labels",
                f"assigned {len(self.vlans)} VLANs and {len(self.group_ids)} group ids, "
                f"the rules need {vlans} and {groups}",
            )
        return self.vlans, self.group_ids


@dataclass
class _Use:
    window: Window
    owner: str


@dataclass
class _Uses:
    """One label's uses on one link (or one group id's), sorted by start.

    Every reservation ever booked stays here until it is cancelled, so a
    busy link's first VLANs gather the whole history; an overlap check reads
    only the uses that start within the longest use's length before the
    window ends, found by bisection.
    """

    uses: list[_Use] = field(default_factory=list)
    longest: int = 0  # an upper bound: dropping a use leaves it as it was

    def add(self, use: _Use) -> None:
        insort(self.uses, use, key=_start)
        self.longest = max(self.longest, use.window[1] - use.window[0])

    def drop(self, owner: str, start: int) -> None:
        """Forget `owner`'s uses that start at `start`."""
        uses = self.uses
        at = bisect_left(uses, start, key=_start)
        while at < len(uses) and uses[at].window[0] == start:
            if uses[at].owner == owner:
                del uses[at]
            else:
                at += 1

    def taken(self, owner: str, window: Window) -> bool:
        """Whether someone other than `owner` uses it at some instant of `window`."""
        start, end = window
        uses = self.uses
        first = bisect_right(uses, start - self.longest, key=_start)
        last = bisect_left(uses, end, key=_start)
        return any(u.owner != owner and start < u.window[1] for u in uses[first:last])


def _start(use: _Use) -> int:
    return use.window[0]


@dataclass(frozen=True)
class _Owned:
    """What one owner holds: its (link, VLAN) pairs and group ids, over one window."""

    window: Window
    vlans: tuple[tuple[str, int], ...]
    group_ids: tuple[int, ...]


@dataclass
class LabelCalendar:
    """Every reservation's labels with its window; `assign` picks the lowest free ones."""

    vlan_spans: Mapping[str, VlanSpans] = field(default_factory=dict)  # link -> allowed VLANs
    group_ids: range = BRAID_GROUP_IDS
    _vlans: dict[tuple[str, int], _Uses] = field(default_factory=dict)
    _groups: dict[int, _Uses] = field(default_factory=dict)
    _owned: dict[str, _Owned] = field(default_factory=dict)
    _allowed_on: dict[tuple[str, ...], range | tuple[int, ...]] = field(default_factory=dict)

    @staticmethod
    def of(topology: Topology) -> LabelCalendar:
        """An empty calendar for `topology`'s links and the VLANs each may carry."""
        return LabelCalendar({link.id: link.vlans for link in topology.links.values()})

    def assign(
        self, owner: str, window: Window, paths: Sequence[Sequence[str]], groups: int
    ) -> Assigned:
        """Labels for `owner`'s paths (each a sequence of link ids) over `window`; not recorded.

        Each path gets the lowest VLAN allowed on all its links and free on
        each of them for the window, different from the owner's other paths.
        Raises `NoFreeLabelError` naming a link that has none left.
        """
        vlans: list[int] = []
        for links in paths:
            vlans.append(self._free_vlan(owner, window, links, vlans))
        return Assigned(tuple(vlans), self._free_groups(owner, window, groups))

    def record(
        self, owner: str, window: Window, paths: Sequence[Sequence[str]], labels: Assigned
    ) -> None:
        """Note `owner`'s labels as used over `window` (replacing what it held before)."""
        used = tuple(
            (link, vlan) for links, vlan in zip(paths, labels.vlans, strict=True) for link in links
        )
        owned = _Owned(window, used, labels.group_ids)
        if self._owned.get(owner) == owned:
            return  # a booking noted at admission, learnt again once written
        self.release(owner)
        for key in used:
            self._vlans.setdefault(key, _Uses()).add(_Use(window, owner))
        for group in labels.group_ids:
            self._groups.setdefault(group, _Uses()).add(_Use(window, owner))
        self._owned[owner] = owned

    def release(self, owner: str) -> None:
        owned = self._owned.pop(owner, None)
        if owned is None:
            return
        start = owned.window[0]
        for key in owned.vlans:
            self._drop(self._vlans, key, owner, start)
        for group in owned.group_ids:
            self._drop(self._groups, group, owner, start)

    def clashes(
        self, owner: str, window: Window, paths: Sequence[Sequence[str]], labels: Assigned
    ) -> list[str]:
        """What of `labels` someone else holds over an overlapping window (empty: none)."""
        found = [
            f"VLAN {vlan} on link {link}"
            for links, vlan in zip(paths, labels.vlans, strict=True)
            for link in links
            if self._taken(self._vlans.get((link, vlan)), owner, window)
        ]
        found += [
            f"group id {group}"
            for group in labels.group_ids
            if self._taken(self._groups.get(group), owner, window)
        ]
        return found

    def owners(self) -> Iterable[str]:
        return self._owned.keys()

    # -- internals -----------------------------------------------------------

    def _free_vlan(
        self, owner: str, window: Window, links: Sequence[str], mine: Sequence[int]
    ) -> int:
        allowed = self._allowed(links)
        for vlan in allowed:
            if vlan in mine:
                continue
            uses = (self._vlans.get((link, vlan)) for link in links)
            if not any(self._taken(u, owner, window) for u in uses):
                return vlan
        busiest = max(links, key=lambda link: sum(1 for key in self._vlans if key[0] == link))
        span = f"{allowed[0]}-{allowed[-1]}" if allowed else "(none allowed on all of them)"
        raise NoFreeLabelError(
            f"links.{busiest}.vlans",
            f"no VLAN in {span} is free on every link of the path {'/'.join(links)}",
        )

    def _allowed(self, links: Sequence[str]) -> range | tuple[int, ...]:
        key = tuple(links)
        found = self._allowed_on.get(key)
        if found is None:
            found = allowed_vlans([self.vlan_spans.get(link, ALL_VLANS) for link in links])
            self._allowed_on[key] = found
        return found

    def _free_groups(self, owner: str, window: Window, count: int) -> tuple[int, ...]:
        found: list[int] = []
        ids = self.group_ids
        first = int.from_bytes(hashlib.blake2b(owner.encode(), digest_size=4).digest(), "big")
        for step in range(len(ids)):
            if len(found) == count:
                break
            group = ids[(first + step) % len(ids)]
            if not self._taken(self._groups.get(group), owner, window):
                found.append(group)
        if len(found) < count:
            raise NoFreeLabelError("group_ids", f"only {len(found)} of {count} group ids are free")
        return tuple(found)

    @staticmethod
    def _taken(uses: _Uses | None, owner: str, window: Window) -> bool:
        return uses is not None and uses.taken(owner, window)

    @staticmethod
    def _drop(table: dict[Any, _Uses], key: object, owner: str, start: int) -> None:
        uses = table.get(key)
        if uses is not None:
            uses.drop(owner, start)
            if not uses.uses:
                del table[key]
