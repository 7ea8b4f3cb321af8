"""Deterministic allocation of path labels (VLAN ids), group ids and cookies.

The lowest free values are taken, so the same inputs always give the same
labels (reproducible plans, diffable rule sets). A reservation's cookie is
derived from its id, so rules can be traced back to it on any switch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from braid.core.errors import InputError
from braid.core.rules.model import BRAID_COOKIE_TAG, BRAID_GROUP_IDS, VLAN_IDS, RulePlan

__all__ = ["LabelPool", "Labels", "reservation_cookie"]


def reservation_cookie(reservation_id: str) -> int:
    """The cookie on every flow of `reservation_id`: braid's tag plus 48 bits of its id's hash."""
    digest = hashlib.blake2b(reservation_id.encode(), digest_size=6).digest()
    return BRAID_COOKIE_TAG | int.from_bytes(digest, "big")


class Labels(Protocol):
    """Where the compiler gets a plan's VLANs and group ids: a pool that picks the lowest
    free ones, or the labels a reservation was assigned at booking."""

    def take(self, vlans: int, groups: int) -> tuple[tuple[int, ...], tuple[int, ...]]: ...


@dataclass(frozen=True, slots=True)
class LabelPool:
    """Which VLAN ids and group ids may be used, and which are taken already."""

    vlans: range = VLAN_IDS
    group_ids: range = BRAID_GROUP_IDS
    vlans_in_use: frozenset[int] = field(default_factory=frozenset)
    groups_in_use: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.vlans.step != 1 or not self.vlans or self.vlans[0] < 1 or self.vlans[-1] > 4094:
            raise InputError("vlans", f"must be a non-empty range within 1..4094: {self.vlans}")
        if self.group_ids.step != 1 or not self.group_ids:
            raise InputError("group_ids", f"must be a non-empty range: {self.group_ids}")

    def take(self, vlans: int, groups: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The lowest `vlans` free VLAN ids and `groups` free group ids."""
        return (
            _lowest_free(self.vlans, self.vlans_in_use, vlans, "VLAN"),
            _lowest_free(self.group_ids, self.groups_in_use, groups, "group id"),
        )

    def with_plans(self, plans: Iterable[RulePlan]) -> LabelPool:
        """This pool with the labels of `plans` marked as taken."""
        plans = tuple(plans)
        return LabelPool(
            self.vlans,
            self.group_ids,
            self.vlans_in_use | {v for p in plans for v in p.labels},
            self.groups_in_use | {g for p in plans for g in p.group_ids},
        )


def _lowest_free(pool: range, used: frozenset[int], count: int, what: str) -> tuple[int, ...]:
    found: list[int] = []
    for value in pool:
        if len(found) == count:
            break
        if value not in used:
            found.append(value)
    if len(found) < count:
        free = len(pool) - len(used.intersection(pool))
        raise InputError(
            f"{what} pool", f"exhausted: need {count}, {free} free in {pool[0]}..{pool[-1]}"
        )
    return tuple(found)
