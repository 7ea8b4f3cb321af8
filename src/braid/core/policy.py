"""Booking policy: what a role or a user may book (horizon, duration, bandwidth, quotas, endpoints).

An operator writes limits per role and per user; a user's own limits
override their role's, one rule at a time. A booking is checked as it would
be stored (its window and bandwidth, after planning), so a mode that lets
the planner choose the start or the bandwidth cannot slip past a rule.
Every violation names its rule. Two quotas: `quota` bounds the bandwidth an
owner holds at any instant, `byte_quota` the bytes all of an owner's
bookings that have not ended may move (a fixed booking counts its rate times
its window, a volume its steps').
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.model.units import (
    format_bandwidth,
    format_volume,
    human_duration,
    parse_bandwidth,
    parse_duration,
    parse_volume,
)

__all__ = [
    "RULES",
    "Booked",
    "Limits",
    "Policy",
    "Violation",
    "byte_quota_violation",
    "check_booking",
    "check_steps",
    "limits_from_dict",
    "peak_bandwidth",
    "policy_from_dict",
]

RULES = ("horizon", "max_duration", "max_bandwidth", "quota", "byte_quota", "endpoints")


@dataclass(frozen=True, slots=True)
class Limits:
    """One set of rules; None means no limit. Seconds, bit/s, bytes (`byte_quota`), node ids."""

    horizon: int | None = None
    max_duration: int | None = None
    max_bandwidth: int | None = None
    quota: int | None = None
    endpoints: frozenset[str] | None = None
    byte_quota: int | None = None

    @property
    def counts_others(self) -> bool:
        """Whether a rule needs the owner's other bookings (so admissions go one at a time)."""
        return self.quota is not None or self.byte_quota is not None

    def over(self, base: Limits) -> Limits:
        """These limits where set, `base`'s elsewhere."""
        mine = {f.name: getattr(self, f.name) for f in fields(self)}
        return replace(base, **{k: v for k, v in mine.items() if v is not None})


@dataclass(frozen=True, slots=True)
class Policy:
    """Rules per role and per user; `horizon` (seconds, None for none) binds whoever sets none.

    `braid serve` gives every policy its `booking_horizon_days` setting as
    `horizon` (a year by default), so no booking ends centuries from now
    unless an operator's rule says it may.
    """

    roles: Mapping[str, Limits] = field(default_factory=dict)
    users: Mapping[str, Limits] = field(default_factory=dict)
    horizon: int | None = None

    def limits_for(self, user: str, role: str) -> Limits:
        by_role = self.roles.get(role, Limits()).over(Limits(horizon=self.horizon))
        return self.users.get(user, Limits()).over(by_role)


@dataclass(frozen=True, slots=True)
class Booked:
    """Another booking of the same user: its window and bandwidth (bit/s)."""

    start: int
    end: int
    bandwidth: int

    @property
    def bytes(self) -> int:
        return self.bandwidth * (self.end - self.start) // 8


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str


def check_booking(
    limits: Limits,
    *,
    src: str,
    dst: str,
    start: int,
    end: int,
    bandwidth: int,
    now: int,
    others: Iterable[Booked] = (),
    owned_bytes: int = 0,
) -> Violation | None:
    """The first rule the booking breaks, or None. `others`: the owner's other live bookings
    in the window (for `quota`); `owned_bytes`: the bytes of all of them (for `byte_quota`)."""
    if limits.endpoints is not None:
        outside = [n for n in (src, dst) if n not in limits.endpoints]
        if outside:
            allowed = ", ".join(sorted(limits.endpoints))
            return Violation("endpoints", f"{outside[0]} is not an allowed endpoint ({allowed})")
    if limits.horizon is not None and end > now + limits.horizon:
        latest = format_instant(now + limits.horizon)
        return Violation(
            "horizon",
            f"the end {format_instant(end)} is past the horizon: bookings must end within "
            f"{human_duration(limits.horizon)} of now, by {latest}",
        )
    if limits.max_duration is not None and end - start > limits.max_duration:
        return Violation(
            "max_duration",
            f"{human_duration(end - start)} is longer than the "
            f"{human_duration(limits.max_duration)} allowed",
        )
    if limits.max_bandwidth is not None and bandwidth > limits.max_bandwidth:
        return Violation(
            "max_bandwidth",
            f"{format_bandwidth(bandwidth)} is more than the "
            f"{format_bandwidth(limits.max_bandwidth)} allowed",
        )
    if limits.quota is not None:
        peak = peak_bandwidth(others, start, end)
        if peak + bandwidth > limits.quota:
            return Violation(
                "quota",
                f"with {format_bandwidth(peak)} already booked in this window, "
                f"{format_bandwidth(bandwidth)} more is over the quota of "
                f"{format_bandwidth(limits.quota)}",
            )
    return byte_quota_violation(limits, Booked(start, end, bandwidth).bytes, owned_bytes)


def byte_quota_violation(limits: Limits, asked: int, owned: int) -> Violation | None:
    """Whether `asked` bytes more, on top of the `owned` bytes booked, breaks `byte_quota`."""
    if limits.byte_quota is None or owned + asked <= limits.byte_quota:
        return None
    return Violation(
        "byte_quota",
        f"with {format_volume(owned)} already booked, {format_volume(asked)} more is over "
        f"the byte quota of {format_volume(limits.byte_quota)}",
    )


def check_steps(
    limits: Limits,
    *,
    src: str,
    dst: str,
    steps: Sequence[Booked],
    now: int,
    others: Iterable[Booked] = (),
    owned_bytes: int = 0,
) -> Violation | None:
    """`check_booking` for a rate profile: the window is all its steps, the bandwidth
    its peak, the quota holds at every step with that step's rate on top, and the
    byte quota counts the bytes of its steps."""
    start, end = steps[0].start, steps[-1].end
    peak = max(step.bandwidth for step in steps)
    found = check_booking(
        replace(limits, quota=None, byte_quota=None), src=src, dst=dst, start=start, end=end,
        bandwidth=peak, now=now,
    )  # fmt: skip
    if found is None:
        found = byte_quota_violation(limits, sum(s.bytes for s in steps), owned_bytes)
    if found is not None or limits.quota is None:
        return found
    counted = list(others)
    quota = Limits(quota=limits.quota)
    for step in steps:
        found = check_booking(
            quota, src=src, dst=dst, start=step.start, end=step.end, bandwidth=step.bandwidth,
            now=now, others=counted,
        )  # fmt: skip
        if found is not None:
            return found
    return None


def peak_bandwidth(bookings: Iterable[Booked], start: int, end: int) -> int:
    """The highest sum of bandwidth of `bookings` at any instant of [start, end)."""
    steps: list[tuple[int, int]] = []
    for b in bookings:
        lo, hi = max(b.start, start), min(b.end, end)
        if lo < hi:
            steps += [(lo, b.bandwidth), (hi, -b.bandwidth)]
    peak = level = 0
    for _, delta in sorted(steps, key=lambda s: (s[0], s[1])):  # ends before starts
        level += delta
        peak = max(peak, level)
    return peak


def policy_from_dict(data: object, where: str = "policy") -> Policy:
    """Parse `{roles: {ROLE: LIMITS}, users: {USER: LIMITS}}`; errors name the setting's path."""
    if data is None:
        return Policy()
    section = _mapping(data, where)
    unknown = sorted(set(section) - {"roles", "users"})
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", "unknown key; known: roles, users")
    groups = {}
    for group in ("roles", "users"):
        entries = _mapping(section.get(group) or {}, f"{where}.{group}")
        groups[group] = {
            str(name): limits_from_dict(value, f"{where}.{group}.{name}")
            for name, value in entries.items()
        }
    return Policy(roles=groups["roles"], users=groups["users"])


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(where, "must be a mapping")
    return value


def limits_from_dict(value: object, where: str) -> Limits:
    """One set of rules (`{horizon: 30d, max_bandwidth: 10G, ...}`); errors name `where.RULE`."""
    entries = _mapping(value or {}, where)
    unknown = sorted(set(entries) - set(RULES))
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", f"unknown rule; known: {', '.join(RULES)}")
    parsed: dict[str, Any] = {}
    for rule, raw in entries.items():
        path = f"{where}.{rule}"
        if raw is None:
            continue
        if rule in ("horizon", "max_duration"):
            parsed[rule] = parse_duration(raw, path)
        elif rule in ("max_bandwidth", "quota"):
            parsed[rule] = parse_bandwidth(raw, path)
        elif rule == "byte_quota":
            parsed[rule] = parse_volume(raw, path)
        else:
            parsed[rule] = _endpoints(raw, path)
    return Limits(**parsed)


def _endpoints(raw: object, where: str) -> frozenset[str]:
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise InputError(where, "must be a list of node ids")
    return frozenset(raw)
