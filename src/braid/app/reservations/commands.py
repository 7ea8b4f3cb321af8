"""What callers ask of the reservation service, parsed once at the edge (REST, CLI, tests).

A modification is parsed whole here (a fixed reservation's fields or a
volume's, never both). A booking's planner fields are kept as
sent: they are checked against the current topology, with the same rules
and messages as `braid plan`, at admission (`requests_rest.to_request`);
the service's own `hold`, `protect` and `policing` are parsed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from braid.app.reservations.idempotency import check_key
from braid.core.errors import InputError
from braid.core.model.instants import format_instant, parse_instant
from braid.core.model.units import parse_bandwidth, parse_volume, to_mbps
from braid.core.rules.enforcement import Policing, parse_policing
from braid.core.volume import OBJECTIVES, Objective

__all__ = ["Modify", "Reserve", "parse_objective"]


@dataclass(frozen=True, slots=True)
class Reserve:
    """A booking: the body as sent (the planner's fields among it), and whether to hold.

    `id` is the reservation's id when the caller must know it before booking
    (an NSI connection id is the reservation's); None lets the service pick one.
    """

    body: Mapping[str, Any] = field(hash=False)
    hold: bool = False
    id: str | None = None
    protect: bool = False  # book a standby path too (fail-over)
    key: str | None = None  # the client's Idempotency-Key (see app.idempotency)
    policing: Policing = Policing.SOFT  # what becomes of traffic above the booked rate

    @staticmethod
    def parse(body: object, key: str | None = None) -> Reserve:
        key = check_key(key)
        if not isinstance(body, Mapping):
            raise InputError("", "the body must be a JSON object")
        hold, protect = body.get("hold", False), body.get("protect", False)
        if not isinstance(hold, bool):
            raise InputError("hold", "must be true or false")
        if not isinstance(protect, bool):
            raise InputError("protect", "must be true or false")
        if protect and body.get("max_paths", 1) != 1:
            raise InputError(
                "protect", "a protected reservation takes one path; leave max_paths at 1"
            )
        policing = parse_policing(body.get("policing", Policing.SOFT.value))
        return Reserve(body, hold, protect=protect, key=key, policing=policing)


FIXED_CHANGES: Final = ("end", "bandwidth")
VOLUME_CHANGES: Final = ("deadline", "volume", "max_rate", "objective")
_CHANGEABLE: Final = (
    "a fixed reservation's 'end' and 'bandwidth', a volume's 'deadline', 'volume', "
    "'max_rate' and 'objective' can change"
)


@dataclass(frozen=True, slots=True)
class Modify:
    """What a booked reservation should become: a fixed one's new end and/or bandwidth
    (bit/s), a volume's new deadline, volume (bytes), rate cap (bit/s) and/or objective."""

    end: int | None = None
    bandwidth: int | None = None
    deadline: int | None = None
    volume: int | None = None
    max_rate: int | None = None
    objective: Objective | None = None

    @staticmethod
    def parse(body: object, *, zone: str | None = None, now: int | None = None) -> Modify:
        """The change `body` asks for; a local `end` or `deadline` is read in `zone` at `now`."""
        if not isinstance(body, Mapping):
            raise InputError("", "the body must be a JSON object")
        unknown = sorted(set(body) - {*FIXED_CHANGES, *VOLUME_CHANGES})
        if unknown:
            raise InputError(unknown[0], f"cannot be modified; {_CHANGEABLE}")
        if not body:
            raise InputError("", f"give what changes; {_CHANGEABLE}")
        fixed = [name for name in FIXED_CHANGES if name in body]
        volume = [name for name in VOLUME_CHANGES if name in body]
        if fixed and volume:
            raise InputError(volume[0], f"a volume's {volume[0]!r} cannot change with {fixed[0]!r}")

        def instant(name: str) -> int | None:
            return parse_instant(body[name], name, zone=zone, now=now) if name in body else None

        def rate(name: str) -> int | None:
            return parse_bandwidth(body[name], name) if name in body else None

        return Modify(
            end=instant("end"),
            bandwidth=rate("bandwidth"),
            deadline=instant("deadline"),
            volume=parse_volume(body["volume"], "volume") if "volume" in body else None,
            max_rate=rate("max_rate"),
            objective=parse_objective(body["objective"]) if "objective" in body else None,
        )

    @property
    def of_volume(self) -> bool:
        """True when the change is one only a volume reservation can take."""
        return any(getattr(self, name) is not None for name in VOLUME_CHANGES)

    def sent(self) -> dict[str, Any]:
        """The volume fields changed, as a request body writes them (a refusal's offers)."""
        out: dict[str, Any] = {}
        if self.deadline is not None:
            out["deadline"] = format_instant(self.deadline)
        if self.volume is not None:
            out["volume"] = self.volume
        if self.max_rate is not None:
            out["max_rate"] = to_mbps(self.max_rate)
        if self.objective is not None:
            out["objective"] = self.objective
        return out


def parse_objective(value: object) -> Objective:
    for objective in OBJECTIVES:
        if value == objective:
            return objective
    raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}; got {value!r}")
