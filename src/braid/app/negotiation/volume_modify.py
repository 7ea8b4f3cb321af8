"""Modifying a committed volume across domains: a new deadline, volume or rate cap.

Make-before-break, as a window's modify: what the old profile carried before
now stays as it was (those bytes have moved), and the rest of the new total
is negotiated from now as a fresh volume whose offers and Preps name every
old step (`Replaces` and `replaces_all`), so each domain counts the old steps
as free for the new ones and books only the excess while both stand. The new
steps' decisions and the release of every old step are one durable write; the
releases leave once the new steps are committed. A refusal writes nothing:
the old version stands, and the refusal says how much could move by the
deadline (counting what has moved) and when all of it could at the earliest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from braid.app.errors import RejectedError
from braid.app.negotiation.context import RunContext
from braid.app.negotiation.volume import (
    Replacing,
    VolumeOutcome,
    VolumeRequest,
    check_volume_request,
    lookup_volume,
    negotiate_volume,
)
from braid.core.errors import InputError
from braid.core.model.instants import format_instant
from braid.core.negotiation.transaction import Decision, Transaction
from braid.core.rules.enforcement import Policing, parse_policing
from braid.core.volume.profile import BITS_PER_BYTE

__all__ = ["VolumeChange", "carried_before", "modify_volume"]


@dataclass(frozen=True, slots=True)
class VolumeChange:
    """The fields to change; None keeps the reservation's own."""

    volume_bytes: int | None = None  # the new total, counting what has moved
    deadline: int | None = None
    max_rate: int | None = None  # bit/s

    def empty(self) -> bool:
        return self.volume_bytes is None and self.deadline is None and self.max_rate is None


def modify_volume(
    context: RunContext, reservation: str, change: VolumeChange
) -> VolumeOutcome | None:
    """The new version (committed, or refused with the old standing); None if `reservation`
    is no volume. InputError names the field; RejectedError says why it cannot change."""
    body = lookup_volume(context, reservation)
    if body is None:
        return None
    if body["status"] != "committed":
        raise RejectedError(f"reservation {reservation!r} is {body['status']}: not modified")
    if change.empty():
        raise InputError("body", "nothing to change: give volume, deadline or max_rate")
    now = int(context.clock())
    if (body.get("completion") or 0) <= now:
        raise RejectedError(f"reservation {reservation!r} has moved its volume: nothing to modify")
    request, replacing = _remainder(context, body, change, now)
    check_volume_request(context, request)
    return negotiate_volume(context, request, replacing)


def _remainder(
    context: RunContext, body: Mapping[str, Any], change: VolumeChange, now: int
) -> tuple[VolumeRequest, Replacing]:
    """What is left to move from now, and the old version it replaces."""
    history = carried_before(body, now)
    moved = sum(rate * (end - start) for start, end, rate in history) // BITS_PER_BYTE
    total = body["volume_bytes"] if change.volume_bytes is None else change.volume_bytes
    if total <= moved:
        raise InputError(
            "volume", f"{moved} bytes have moved already: ask for more, or cancel the reservation"
        )
    start = max(now, int(body["not_before"]))
    deadline = int(body["deadline"]) if change.deadline is None else change.deadline
    if deadline <= start:
        raise InputError("deadline", f"must be after {format_instant(start)}")
    max_rate = body.get("max_rate") if change.max_rate is None else change.max_rate
    src, dst = body["src"], body["dst"]
    request = VolumeRequest(
        str(body["id"]), src[0], src[1], dst[0], dst[1], total - moved, start, deadline,
        int(body.get("max_paths", 0)), max_rate,
        # As the old version: its steps count as free only for the same directions.
        symmetric=bool(body.get("symmetric", True)),
        policing=parse_policing(body.get("policing", Policing.SOFT.value)),
    )  # fmt: skip
    return request, Replacing(_committed_steps(context, body), history, moved)


def carried_before(body: Mapping[str, Any], now: int) -> tuple[tuple[int, int, int], ...]:
    """The (start, end, bit/s) steps a stored volume carried before `now`: its earlier
    versions' history, then its own steps up to now (the one in force cut at now)."""
    kept = [(int(s), int(e), int(r)) for s, e, r in body.get("history", ())]
    for step in body.get("steps", ()):
        if step["start"] >= now:
            break
        kept.append((step["start"], min(step["end"], now), sum(step["path_rates"])))
    return tuple(kept)


def _committed_steps(context: RunContext, body: Mapping[str, Any]) -> tuple[Transaction, ...]:
    found: Sequence[Transaction | None] = [
        context.decisions.transaction(tx) for tx in body["step_transactions"]
    ]
    return tuple(tx for tx in found if tx is not None and tx.decision is Decision.COMMIT)
