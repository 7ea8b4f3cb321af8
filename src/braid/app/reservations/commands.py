"""What callers ask of the reservation service, parsed once at the edge (REST, CLI, tests).

A modification is parsed whole here. A booking's planner fields are kept as
sent: they are checked against the current topology, with the same rules
and messages as `braid plan`, at admission (`requests_rest.to_request`);
the service's own `hold`, `protect` and `policing` are parsed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from braid.app.reservations.idempotency import check_key
from braid.core.errors import InputError
from braid.core.model.instants import parse_instant
from braid.core.model.units import parse_bandwidth
from braid.core.rules.enforcement import Policing, parse_policing

__all__ = ["Modify", "Reserve"]


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


@dataclass(frozen=True, slots=True)
class Modify:
    """A new end and/or a new bandwidth (bit/s) for a booked reservation."""

    end: int | None = None
    bandwidth: int | None = None

    @staticmethod
    def parse(body: object, *, zone: str | None = None, now: int | None = None) -> Modify:
        """The change `body` asks for; a local `end` is read in `zone` at `now`."""
        if not isinstance(body, Mapping):
            raise InputError("", "the body must be a JSON object")
        unknown = sorted(set(body) - {"end", "bandwidth"})
        if unknown:
            raise InputError(unknown[0], "only 'end' and 'bandwidth' can be modified")
        if not body:
            raise InputError("", "give a new 'end', a new 'bandwidth', or both")
        end = parse_instant(body["end"], "end", zone=zone, now=now) if "end" in body else None
        bandwidth = parse_bandwidth(body["bandwidth"], "bandwidth") if "bandwidth" in body else None
        return Modify(end, bandwidth)
